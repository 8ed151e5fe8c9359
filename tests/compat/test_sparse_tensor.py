"""Sparse tensors and SparseTensor IPC messages.

pyarrow's Python API has the four sparse classes but no way to write or read a SparseTensor
message (pa.ipc.write_tensor/read_tensor take dense tensors only), so:
- the classes are checked against pyarrow's (to_numpy parts, to_tensor, has_canonical_format);
- the messages arrowipc writes are decoded here by a minimal flatbuffers reader written from the
  specification (slot ids of Message.fbs and SparseTensor.fbs), and their bodies compared byte
  for byte with the layout the format fixes;
- messages built here by hand, per the specification, are read back, honest and hostile (one test
  per rule arrowipc enforces, with its message).
"""
import io
import struct

import numpy as np
import pytest

import arrowipc
from arrowipc import ipc
from arrowipc.errors import ArrowInvalid, ArrowTypeError

pa = pytest.importorskip("pyarrow")
flatbuffers = pytest.importorskip("flatbuffers")

CLASSES = ["SparseCOOTensor", "SparseCSRMatrix", "SparseCSCMatrix", "SparseCSFTensor"]
MATRIX = np.array([[0, 1, 2, 0], [0, 0, 3, 0], [0, 4, 0, 5], [0, 0, 0, 0], [6, 0, 7, 8],
                   [0, 9, 0, 0]], dtype="float64")          # the specification's CSR example
rng = np.random.default_rng(15)
CUBE = ((rng.random((3, 4, 5)) < 0.3) * rng.integers(1, 100, (3, 4, 5))).astype("int32")


def _parts_equal(ours, theirs):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if isinstance(b, list):
            assert len(a) == len(b)
            for x, y in zip(a, b):
                assert np.array_equal(x, y) and x.dtype == y.dtype
        else:
            assert np.array_equal(a, b) and a.dtype == b.dtype and a.shape == b.shape


def _dense_cases(name):
    cases = [MATRIX, MATRIX.astype("uint16"), np.zeros((3, 2), dtype="float32")]
    if name in ("SparseCOOTensor", "SparseCSFTensor"):
        cases += [CUBE, CUBE.astype("int8")[:, :2]]
    if name == "SparseCOOTensor":          # pyarrow's CSF has "TODO for ndim <= 1"
        cases += [np.array([0, 5, 0, -7], dtype="int64")]
    return cases


# -- the classes, against pyarrow's --------------------------------------------------------------

@pytest.mark.parametrize("name", CLASSES)
def test_from_dense_numpy_matches_pyarrow(name):
    for dense in _dense_cases(name):
        names = [f"d{i}" for i in range(dense.ndim)]
        ours = getattr(arrowipc, name).from_dense_numpy(dense, dim_names=names)
        theirs = getattr(pa, name).from_dense_numpy(dense, dim_names=names)
        _parts_equal(ours.to_numpy(), theirs.to_numpy())
        assert ours.shape == theirs.shape and ours.ndim == theirs.ndim
        assert ours.non_zero_length == theirs.non_zero_length and ours.size == theirs.size
        assert ours.dim_names == theirs.dim_names and ours.dim_name(0) == theirs.dim_name(0)
        assert str(ours.type) == str(theirs.type)
        assert np.array_equal(ours.to_tensor().to_numpy(), theirs.to_tensor().to_numpy())
        assert ours.to_tensor().dim_names == list(names)
        assert ours.equals(theirs) and ours == getattr(arrowipc, name).from_dense_numpy(dense)


@pytest.mark.parametrize("name", CLASSES)
def test_from_tensor_of_either_library(name):
    dense = MATRIX
    theirs = getattr(pa, name).from_tensor(pa.Tensor.from_numpy(dense))
    for tensor in (pa.Tensor.from_numpy(dense), arrowipc.Tensor.from_numpy(dense)):
        ours = getattr(arrowipc, name).from_tensor(tensor)
        _parts_equal(ours.to_numpy(), theirs.to_numpy())


def test_coo_from_numpy_and_canonical_flag_as_pyarrow():
    data = np.array([3.0, 1.0, 2.0])
    for coords in (np.array([[0, 1], [1, 0], [1, 2]]), np.array([[1, 2], [0, 1], [1, 0]]),
                   np.array([[0, 1], [0, 1], [1, 2]])):       # sorted, unsorted, duplicate
        ours = arrowipc.SparseCOOTensor.from_numpy(data, coords, (2, 3))
        theirs = pa.SparseCOOTensor.from_numpy(data, coords, (2, 3))
        assert ours.has_canonical_format == theirs.has_canonical_format
        _parts_equal(ours.to_numpy(), theirs.to_numpy())
    unsorted = arrowipc.SparseCOOTensor.from_numpy(data, np.array([[1, 2], [0, 1], [1, 0]]),
                                                   (2, 3))
    assert np.array_equal(unsorted.to_tensor().to_numpy(),
                          pa.SparseCOOTensor.from_numpy(data, np.array([[1, 2], [0, 1], [1, 0]]),
                                                        (2, 3)).to_tensor().to_numpy())


@pytest.mark.parametrize("name", ["SparseCSRMatrix", "SparseCSCMatrix"])
def test_csx_from_numpy_as_pyarrow(name):
    _, indptr, indices = getattr(pa, name).from_dense_numpy(MATRIX).to_numpy()
    data = getattr(pa, name).from_dense_numpy(MATRIX).to_numpy()[0]
    ours = getattr(arrowipc, name).from_numpy(data, indptr, indices, MATRIX.shape)
    assert np.array_equal(ours.to_tensor().to_numpy(), MATRIX)


def test_csf_with_an_axis_order_as_pyarrow():
    # the specification's CSF example, walked in axis order (0, 1, 2, 3)
    indptr = [np.array([0, 2, 3]), np.array([0, 1, 3, 4]), np.array([0, 2, 4, 5, 8])]
    indices = [np.array([0, 1]), np.array([0, 1, 1]), np.array([0, 0, 1, 1]),
               np.array([1, 2, 0, 2, 0, 0, 1, 2])]
    data = np.arange(1, 9, dtype="float64")
    for order in ([0, 1, 2, 3], [1, 0, 2, 3]):
        shape = (2, 3, 4, 5) if order[0] == 0 else (3, 2, 4, 5)
        ours = arrowipc.SparseCSFTensor.from_numpy(data, indptr, indices, shape, order)
        theirs = pa.SparseCSFTensor.from_numpy(data, indptr, indices, shape, order)
        assert np.array_equal(ours.to_tensor().to_numpy(), theirs.to_tensor().to_numpy())
        assert ours.axis_order == order


def test_from_numpy_refuses_coordinates_outside_the_shape():
    # pyarrow accepts these and crashes in to_tensor; arrowipc refuses them up front
    with pytest.raises(ArrowInvalid, match=r"coords\[:, 1\]\[0\] = 5 is outside \[0, 3\)"):
        arrowipc.SparseCOOTensor.from_numpy(np.array([3.0, 1.0]), np.array([[1, 5], [0, 1]]),
                                            (2, 3))


def test_from_numpy_refuses_non_integer_indices():
    with pytest.raises(ArrowTypeError, match="coords must be a 2-D integer array"):
        arrowipc.SparseCOOTensor.from_numpy(np.array([1.0]), np.array([[0.5, 1.0]]), (2, 3))


def test_constructor_is_refused_as_pyarrow_does():
    with pytest.raises(TypeError):
        arrowipc.SparseCOOTensor()


# -- messages arrowipc writes, read by a reader written from the specification ------------------

def _u32(b, p):
    return struct.unpack_from("<I", b, p)[0]


class _Table:
    """A flatbuffers table: slot i's field offset is at vtable + 4 + 2*i (0 = absent)."""
    def __init__(self, buf, pos):
        self.buf, self.pos = buf, pos
        self.vt = pos - struct.unpack_from("<i", buf, pos)[0]

    def _field(self, slot):
        if 4 + 2 * slot >= struct.unpack_from("<H", self.buf, self.vt)[0]:
            return 0
        return struct.unpack_from("<H", self.buf, self.vt + 4 + 2 * slot)[0]

    def scalar(self, slot, fmt):
        off = self._field(slot)
        return struct.unpack_from(fmt, self.buf, self.pos + off)[0] if off else None

    def table(self, slot):
        p = self.pos + self._field(slot)
        return _Table(self.buf, p + _u32(self.buf, p))

    def vector(self, slot):
        p = self.pos + self._field(slot)
        p += _u32(self.buf, p)
        return p + 4, _u32(self.buf, p)

    def buffer(self, slot):         # inline Buffer struct {offset: long, length: long}
        return struct.unpack_from("<qq", self.buf, self.pos + self._field(slot))


def _written(tensor):
    sink = io.BytesIO()
    n = ipc.write_tensor(tensor, sink)
    raw = sink.getvalue()
    assert n == len(raw) == ipc.get_tensor_size(tensor)
    assert raw[:4] == b"\xff\xff\xff\xff"                  # continuation marker
    meta_len = struct.unpack_from("<i", raw, 4)[0]
    assert (8 + meta_len) % 8 == 0
    meta = raw[8:8 + meta_len]
    message = _Table(meta, _u32(meta, 0))
    assert message.scalar(0, "<h") == 4                    # MetadataVersion V5
    assert message.scalar(1, "<B") == 5                    # MessageHeader.SparseTensor
    body = raw[8 + meta_len:]
    assert message.scalar(3, "<q") == len(body)            # bodyLength
    return message.table(2), meta, body


def _shape(sparse, meta):
    start, n = sparse.vector(2)
    dims = [_Table(meta, start + 4 * i + _u32(meta, start + 4 * i)) for i in range(n)]
    return [d.scalar(0, "<q") for d in dims]


def _int_type(table):
    return table.scalar(0, "<i"), bool(table.scalar(1, "<B"))   # Int {bitWidth, is_signed}


def _padded(*arrays):
    out = b""
    for a in arrays:
        raw = np.ascontiguousarray(a).tobytes()
        out += raw + bytes(-len(raw) % 8)
    return out


def test_coo_message_fields_and_body_bytes():
    coo = arrowipc.SparseCOOTensor.from_dense_numpy(CUBE)
    sparse, meta, body = _written(coo)
    data, coords = coo.to_numpy()
    assert sparse.scalar(0, "<B") == 2                     # Type.Int
    assert _int_type(sparse.table(1)) == (32, True)
    assert _shape(sparse, meta) == [3, 4, 5]
    assert sparse.scalar(3, "<q") == coo.non_zero_length
    assert sparse.scalar(4, "<B") == 1                     # SparseTensorIndexCOO
    index = sparse.table(5)
    assert _int_type(index.table(0)) == (64, True)
    start, n = index.vector(1)
    assert struct.unpack_from(f"<{n}q", meta, start) == (24, 8)     # row-major (nnz, 3) int64
    assert index.buffer(2) == (0, coords.nbytes)
    assert index.scalar(3, "<B") == 1                      # isCanonical
    assert sparse.buffer(6) == (len(_padded(coords)), data.nbytes)
    assert body == _padded(coords, data)


@pytest.mark.parametrize("name,axis", [("SparseCSRMatrix", 0), ("SparseCSCMatrix", 1)])
def test_csx_message_fields_and_body_bytes(name, axis):
    matrix = getattr(arrowipc, name).from_dense_numpy(MATRIX)
    sparse, meta, body = _written(matrix)
    data, indptr, indices = matrix.to_numpy()
    if axis == 0:                                          # the specification's example
        assert list(indptr) == [0, 2, 3, 5, 5, 8, 9] and list(indices) == [1, 2, 2, 1, 3, 0, 2,
                                                                          3, 1]
    assert sparse.scalar(4, "<B") == 2                     # SparseMatrixIndexCSX
    index = sparse.table(5)
    assert (index.scalar(0, "<h") or 0) == axis            # compressedAxis Row/Column
    assert _int_type(index.table(1)) == (64, True) and _int_type(index.table(3)) == (64, True)
    assert index.buffer(2) == (0, indptr.nbytes)
    assert index.buffer(4) == (len(_padded(indptr)), indices.nbytes)
    assert sparse.buffer(6) == (len(_padded(indptr, indices)), data.nbytes)
    assert body == _padded(indptr, indices, data)


def test_csf_message_fields_and_body_bytes():
    csf = arrowipc.SparseCSFTensor.from_dense_numpy(CUBE)
    sparse, meta, body = _written(csf)
    data, indptr, indices = csf.to_numpy()
    assert sparse.scalar(4, "<B") == 3                     # SparseTensorIndexCSF
    index = sparse.table(5)
    spans = []
    for slot in (1, 3):
        start, n = index.vector(slot)
        spans.append([struct.unpack_from("<qq", meta, start + 16 * i) for i in range(n)])
    assert len(spans[0]) == 2 and len(spans[1]) == 3
    start, n = index.vector(4)
    assert struct.unpack_from(f"<{n}i", meta, start) == (0, 1, 2)    # axisOrder
    pos = 0
    for span, arr in zip(spans[0] + spans[1], indptr + indices):
        assert span == (pos, arr.nbytes)
        pos += len(_padded(arr))
    assert body == _padded(*indptr, *indices, data)


@pytest.mark.parametrize("name", CLASSES)
def test_round_trip_of_ours_and_of_pyarrow_objects(name):
    for dense in _dense_cases(name):
        names = [f"d{i}" for i in range(dense.ndim)]
        for obj in (getattr(arrowipc, name).from_dense_numpy(dense, dim_names=names),
                    getattr(pa, name).from_dense_numpy(dense, dim_names=names)):
            sink = io.BytesIO()
            ipc.write_tensor(obj, sink)
            back = ipc.read_tensor(sink.getvalue())
            assert type(back) is getattr(arrowipc, name)
            _parts_equal(back.to_numpy(), obj.to_numpy())
            assert back.dim_names == tuple(names) and back.equals(obj)
            assert np.array_equal(back.to_tensor().to_numpy(), dense)


def test_read_tensor_values_are_views_of_the_body():
    sink = io.BytesIO()
    ipc.write_tensor(arrowipc.SparseCSRMatrix.from_dense_numpy(MATRIX), sink)
    back = ipc.read_tensor(arrowipc.py_buffer(sink.getvalue()))
    assert not back.is_mutable and back.to_numpy()[0].base is not None


def test_message_reader_and_pyarrow_see_a_sparse_tensor_message():
    sink = io.BytesIO()
    ipc.write_tensor(arrowipc.SparseCOOTensor.from_dense_numpy(MATRIX), sink)
    raw = sink.getvalue()
    ours = list(ipc.MessageReader.open_stream(raw))
    theirs = pa.ipc.read_message(pa.py_buffer(raw))
    assert [m.type for m in ours] == [theirs.type] == ["sparse tensor"]
    assert ours[0].body.size == theirs.body.size


def test_a_stream_of_dense_and_sparse_tensors():
    sink = io.BytesIO()
    ipc.write_tensor(np.arange(6, dtype="int64").reshape(2, 3), sink)
    ipc.write_tensor(arrowipc.SparseCSCMatrix.from_dense_numpy(MATRIX), sink)
    sink.seek(0)
    assert isinstance(ipc.read_tensor(sink), arrowipc.Tensor)
    assert isinstance(ipc.read_tensor(sink), arrowipc.SparseCSCMatrix)


# -- messages built by hand per the specification --------------------------------------------------

def _int_table(b, bits=64, signed=True):
    b.StartObject(2)
    b.PrependInt32Slot(0, bits, 0)
    b.PrependBoolSlot(1, signed, False)
    return b.EndObject()


def _struct_slot(b, slot, span):
    b.Prep(8, 16)
    b.PrependInt64(span[1])
    b.PrependInt64(span[0])
    b.PrependStructSlot(slot, b.Offset(), 0)


def _buffer_vector(b, spans):
    b.StartVector(16, len(spans), 8)
    for off, length in reversed(spans):
        b.Prep(8, 16)
        b.PrependInt64(length)
        b.PrependInt64(off)
    return b.EndVector()


def _message(shape, nnz, index, body, data_span, index_type=None):
    """A SparseTensor message of float64 values. `index` is ("coo", indices span, strides or None,
    canonical), ("csx", axis, indptr span, indices span) or ("csf", indptr spans, indices spans,
    axis order)."""
    b = flatbuffers.Builder(0)
    b.StartObject(1)
    b.PrependInt16Slot(0, 2, 0)                            # FloatingPoint {precision: DOUBLE}
    value_type = b.EndObject()
    dims = []
    for n in shape:
        b.StartObject(2)
        b.PrependInt64Slot(0, n, 0)
        dims.append(b.EndObject())
    b.StartVector(4, len(dims), 4)
    for d in reversed(dims):
        b.PrependUOffsetTRelative(d)
    shape_vec = b.EndVector()
    kind = index[0]
    if kind == "coo":
        _, span, strides, canonical = index
        ints = _int_table(b)
        if strides is not None:
            b.StartVector(8, len(strides), 8)
            for s in reversed(strides):
                b.PrependInt64(s)
            strides_vec = b.EndVector()
        b.StartObject(4)
        b.PrependUOffsetTRelativeSlot(0, ints, 0)
        if strides is not None:
            b.PrependUOffsetTRelativeSlot(1, strides_vec, 0)
        _struct_slot(b, 2, span)
        b.PrependBoolSlot(3, canonical, False)
        index_id = 1
    elif kind == "csx":
        _, axis, ptr_span, ind_span = index
        ptr_type, ind_type = _int_table(b), _int_table(b)
        b.StartObject(5)
        b.PrependInt16Slot(0, axis, -1)
        b.PrependUOffsetTRelativeSlot(1, ptr_type, 0)
        _struct_slot(b, 2, ptr_span)
        b.PrependUOffsetTRelativeSlot(3, ind_type, 0)
        _struct_slot(b, 4, ind_span)
        index_id = 2
    else:
        _, ptr_spans, ind_spans, order = index
        ptr_type, ind_type = _int_table(b), _int_table(b)
        ptr_vec, ind_vec = _buffer_vector(b, ptr_spans), _buffer_vector(b, ind_spans)
        b.StartVector(4, len(order), 4)
        for a in reversed(order):
            b.PrependInt32(a)
        order_vec = b.EndVector()
        b.StartObject(5)
        b.PrependUOffsetTRelativeSlot(0, ptr_type, 0)
        b.PrependUOffsetTRelativeSlot(1, ptr_vec, 0)
        b.PrependUOffsetTRelativeSlot(2, ind_type, 0)
        b.PrependUOffsetTRelativeSlot(3, ind_vec, 0)
        b.PrependUOffsetTRelativeSlot(4, order_vec, 0)
        index_id = 3
    index_table = b.EndObject()
    b.StartObject(7)
    b.PrependUint8Slot(0, 3, 0)                            # Type.FloatingPoint
    b.PrependUOffsetTRelativeSlot(1, value_type, 0)
    b.PrependUOffsetTRelativeSlot(2, shape_vec, 0)
    b.PrependInt64Slot(3, nnz, 0)
    b.PrependUint8Slot(4, index_id if index_type is None else index_type, 0)
    b.PrependUOffsetTRelativeSlot(5, index_table, 0)
    _struct_slot(b, 6, data_span)
    sparse = b.EndObject()
    b.StartObject(5)
    b.PrependInt16Slot(0, 4, 0)
    b.PrependUint8Slot(1, 5, 0)
    b.PrependUOffsetTRelativeSlot(2, sparse, 0)
    b.PrependInt64Slot(3, len(body), -1)
    b.Finish(b.EndObject())
    meta = bytes(b.Output())
    meta += bytes(-len(meta) % 8)
    return b"\xff\xff\xff\xff" + struct.pack("<i", len(meta)) + meta + body


def _i64(*values):
    return np.array(values, dtype="<i8").tobytes()


def _f64(*values):
    return np.array(values, dtype="<f8").tobytes()


def _coo(coords, values=(1.0, 2.0), shape=(2, 3), strides=None, canonical=False, nnz=None):
    idx = _i64(*[c for row in coords for c in row])
    body = idx + _f64(*values)
    return _message(shape, len(values) if nnz is None else nnz,
                    ("coo", (0, len(idx)), strides, canonical), body,
                    (len(idx), 8 * len(values)))


def _csr(indptr, indices, values, shape=(2, 3), axis=0, nnz=None, index_type=None):
    p, i = _i64(*indptr), _i64(*indices)
    body = p + i + _f64(*values)
    return _message(shape, len(values) if nnz is None else nnz,
                    ("csx", axis, (0, len(p)), (len(p), len(i))), body,
                    (len(p) + len(i), 8 * len(values)), index_type)


def _csf(indptr, indices, values, shape, order=None):
    bufs, spans = [], []
    for arr in indptr + indices:
        spans.append((sum(len(x) for x in bufs), 8 * len(arr)))
        bufs.append(_i64(*arr))
    body = b"".join(bufs) + _f64(*values)
    n_ptr = len(indptr)
    return _message(shape, len(values), ("csf", spans[:n_ptr], spans[n_ptr:],
                                         list(range(len(shape))) if order is None else order),
                    body, (len(body) - 8 * len(values), 8 * len(values)))


def test_hand_built_messages_are_read():
    coo = ipc.read_tensor(_coo([(1, 2), (0, 1)], canonical=False))
    assert isinstance(coo, arrowipc.SparseCOOTensor) and not coo.has_canonical_format
    assert coo.to_tensor().to_numpy().tolist() == [[0, 2, 0], [0, 0, 1]]
    # column-major index matrix, as indicesStrides allows
    transposed = ipc.read_tensor(_coo([(0, 1), (1, 2)], strides=[8, 16], canonical=True))
    assert transposed.to_tensor().to_numpy().tolist() == [[0, 1, 0], [0, 0, 2]]
    csc = ipc.read_tensor(_csr([0, 1, 1, 2], [1, 0], (5.0, 6.0), axis=1))
    assert isinstance(csc, arrowipc.SparseCSCMatrix)
    assert csc.to_tensor().to_numpy().tolist() == [[0, 0, 6], [5, 0, 0]]
    # walked column first: level 0 is axis 1, level 1 is axis 0
    csf = ipc.read_tensor(_csf([[0, 1, 2]], [[0, 1], [2, 0]], (7.0, 8.0), (3, 2), [1, 0]))
    assert csf.to_tensor().to_numpy().tolist() == [[0, 8], [0, 0], [7, 0]]
    theirs = pa.SparseCSFTensor.from_numpy(np.array([7.0, 8.0]), [np.array([0, 1, 2])],
                                           [np.array([0, 1]), np.array([2, 0])], (3, 2), [1, 0])
    assert np.array_equal(csf.to_tensor().to_numpy(), theirs.to_tensor().to_numpy())


# -- hostile headers: one test per rule ----------------------------------------------------------

def test_coo_index_outside_the_shape_is_refused():
    with pytest.raises(ArrowInvalid, match=r"coords\[:, 1\]\[1\] = 3 is outside \[0, 3\)"):
        ipc.read_tensor(_coo([(0, 1), (1, 3)]))


def test_coo_false_canonical_claim_is_refused():
    with pytest.raises(ArrowInvalid, match="claims canonical order but its coordinates are not "
                                           "sorted"):
        ipc.read_tensor(_coo([(1, 2), (0, 1)], canonical=True))


def test_coo_strides_past_the_indices_buffer_are_refused():
    with pytest.raises(ArrowInvalid, match=r"2x2 COO indices with strides \[800, 8\] reach "
                                           r"byte 816 but the indices buffer has 32 bytes"):
        ipc.read_tensor(_coo([(0, 1), (1, 2)], strides=[800, 8]))


def test_coo_indices_buffer_smaller_than_the_matrix_is_refused():
    # zero strides would let 2 values claim any number of rows: the matrix must be present
    raw = _message((2, 3), 3, ("coo", (0, 16), [0, 0], False), _i64(0, 1) + _f64(1.0, 2.0, 3.0),
                   (16, 24))
    with pytest.raises(ArrowInvalid, match=r"COO indices buffer should hold 3x2 int64 values "
                                           r"\(48 bytes\) but has 16 bytes"):
        ipc.read_tensor(raw)


def test_coo_bad_strides_are_refused():
    with pytest.raises(ArrowInvalid, match=r"COO indicesStrides \[-8, 8\], expected two "
                                           r"non-negative byte strides"):
        ipc.read_tensor(_coo([(0, 1), (1, 2)], strides=[-8, 8]))


def test_indptr_not_monotonic_is_refused():
    with pytest.raises(ArrowInvalid, match=r"indptr is not monotonic: entry 2 \(0\) is less "
                                           r"than entry 1 \(2\)"):
        ipc.read_tensor(_csr([0, 2, 0], [0, 1], (1.0, 2.0)))


def test_indptr_past_non_zero_length_is_refused():
    with pytest.raises(ArrowInvalid, match=r"indptr ends at 3, expected 2"):
        ipc.read_tensor(_csr([0, 1, 3], [0, 1, 2], (1.0, 2.0, 3.0), nnz=2))


def test_indptr_not_starting_at_zero_is_refused():
    with pytest.raises(ArrowInvalid, match="indptr starts at 1, expected 0"):
        ipc.read_tensor(_csr([1, 1, 2], [0, 1], (1.0, 2.0)))


def test_csx_minor_index_outside_the_shape_is_refused():
    with pytest.raises(ArrowInvalid, match=r"indices\[1\] = 9 is outside \[0, 3\)"):
        ipc.read_tensor(_csr([0, 1, 2], [0, 9], (1.0, 2.0)))


def test_csx_indptr_claimed_by_a_huge_shape_is_refused_without_allocating():
    with pytest.raises(ArrowInvalid, match=r"indptr buffer should hold 1000000000000001 int64 "
                                           r"values \(8000000000000008 bytes\) but has 24 bytes"):
        ipc.read_tensor(_csr([0, 1, 2], [0, 1], (1.0, 2.0), shape=(10 ** 15, 3)))


def test_csx_on_a_non_matrix_is_refused():
    with pytest.raises(ArrowInvalid, match=r"a CSX index is for matrices, got shape \[2, 3, 1\]"):
        ipc.read_tensor(_csr([0, 1, 2], [0, 1], (1.0, 2.0), shape=(2, 3, 1)))


def test_csx_unknown_compressed_axis_is_refused():
    with pytest.raises(ArrowInvalid, match=r"compressedAxis 2, expected 0 \(Row\) or 1 "
                                           r"\(Column\)"):
        ipc.read_tensor(_csr([0, 1, 2], [0, 1], (1.0, 2.0), axis=2))


def test_buffer_past_the_body_is_refused():
    raw = _message((2, 3), 1, ("csx", 0, (0, 24), (24, 8)), _i64(0, 1, 1) + _i64(0)
                   + _f64(1.0), (32, 800))
    with pytest.raises(ArrowInvalid, match=r"data buffer \[32, 32\+800\) is outside the "
                                           r"40-byte body"):
        ipc.read_tensor(raw)


def test_huge_non_zero_length_is_refused_without_allocating():
    with pytest.raises(ArrowInvalid, match=r"data buffer should hold 1000000000000 float64 "
                                           r"values \(8000000000000 bytes\) but has 16 bytes"):
        ipc.read_tensor(_coo([(0, 1), (1, 2)], nnz=10 ** 12))


def test_negative_non_zero_length_is_refused():
    with pytest.raises(ArrowInvalid, match="negative non_zero_length -1"):
        ipc.read_tensor(_coo([(0, 1), (1, 2)], nnz=-1))


def test_huge_ndim_is_refused():
    with pytest.raises(ArrowInvalid, match="65 dimensions, more than the limit of 64"):
        ipc.read_tensor(_coo([(0, 1), (1, 2)], shape=(1,) * 65))


def test_negative_dimension_is_refused():
    with pytest.raises(ArrowInvalid, match=r"negative dimension in shape \[2, -3\]"):
        ipc.read_tensor(_coo([(0, 1), (1, 2)], shape=(2, -3)))


def test_unknown_sparse_index_type_is_refused():
    with pytest.raises(ArrowInvalid, match=r"sparse index type 7, expected 1 \(COO\), 2 \(CSX\) "
                                           r"or 3 \(CSF\)"):
        ipc.read_tensor(_csr([0, 1, 2], [0, 1], (1.0, 2.0), index_type=7))


def test_csf_buffer_count_not_matching_ndim_is_refused():
    with pytest.raises(ArrowInvalid, match="CSF indptrBuffers has 0 buffers, expected 1 for 2 "
                                           "dimensions"):
        ipc.read_tensor(_csf([], [[0, 1], [2, 0]], (7.0, 8.0), (2, 3)))


def test_csf_axis_order_not_a_permutation_is_refused():
    with pytest.raises(ArrowInvalid, match=r"axis_order \[0, 0\] is not a permutation of the 2 "
                                           r"dimensions"):
        ipc.read_tensor(_csf([[0, 1, 2]], [[0, 1], [2, 0]], (7.0, 8.0), (2, 3), [0, 0]))


def test_csf_last_level_not_matching_non_zero_length_is_refused():
    with pytest.raises(ArrowInvalid, match=r"the last level has 3 indices, expected 2"):
        ipc.read_tensor(_csf([[0, 1, 3]], [[0, 1], [2, 0, 1]], (7.0, 8.0), (2, 3)))


def test_csf_indptr_past_the_next_level_is_refused():
    with pytest.raises(ArrowInvalid, match=r"indptr\[0\] ends at 5, expected 2"):
        ipc.read_tensor(_csf([[0, 1, 5]], [[0, 1], [2, 0]], (7.0, 8.0), (2, 3)))


def test_csf_index_outside_its_axis_is_refused():
    with pytest.raises(ArrowInvalid, match=r"indices\[0\]\[1\] = 4 is outside \[0, 2\)"):
        ipc.read_tensor(_csf([[0, 1, 2]], [[0, 4], [2, 0]], (7.0, 8.0), (2, 3)))


def test_csf_buffer_of_partial_values_is_refused():
    raw = _message((2, 3), 1, ("csf", [(0, 16)], [(16, 8), (24, 5)], [0, 1]),
                   _i64(0, 1, 0, 0) + _f64(1.0), (32, 8))
    with pytest.raises(ArrowInvalid, match="CSF indices buffer 1 has 5 bytes, not a multiple "
                                           "of the 8-byte int64 values"):
        ipc.read_tensor(raw)


def test_sparse_tensor_without_dimensions_is_refused():
    with pytest.raises(ArrowInvalid, match="a sparse tensor needs at least one dimension"):
        ipc.read_tensor(_coo([], values=(), shape=()))
