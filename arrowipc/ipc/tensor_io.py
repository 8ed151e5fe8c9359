"""Tensor messages: write_tensor, read_tensor, get_tensor_size (pyarrow.ipc's functions).

A Tensor message is one encapsulated message: a Message table whose header is a Tensor table
(value type, shape with optional dimension names, strides in bytes, and the (offset, length) of the
data in the body), followed by the body. The metadata is padded so the body starts 64-byte
aligned, as pyarrow writes it.

A SparseTensor message (experimental in the specification) has a SparseTensor table instead: value
type, shape, non_zero_length, one sparse index (COO coordinates, CSR/CSC pointers and indices, or
CSF per-level pointers and indices, each with its integer type) and the values. The body holds
the index buffers then the values, each starting at a multiple of 8 bytes. On reading every
claim is checked against the body before any array is made: buffers inside the body, counts that
fit the bytes present, indices inside the shape, pointers starting at 0, monotonic and ending
where the next level does.
"""
from __future__ import annotations

import struct

from .. import types as T
from ..errors import ArrowInvalid, ArrowIOError, ArrowTypeError
from ..tensor import (SparseCOOTensor, SparseCSCMatrix, SparseCSFTensor, SparseCSRMatrix,
                      Tensor, as_sparse_tensor, SparseTensor, numpy_dtype_of, tensor_type_of)
from . import metadata as md
from .format import (CONTINUATION, HEADER_SPARSE_TENSOR, HEADER_TENSOR, MAX_TENSOR_DIMENSIONS,
                     METADATA_V5, TYPE_INT)
from .format import BODY_ALIGNMENT as _BODY_ALIGNMENT   # each body buffer starts at a multiple of 8
from .format import SPARSE_INDEX_COO, SPARSE_INDEX_CSF, SPARSE_INDEX_CSX
from .format import SPARSE_INDEX_NAMES as _SPARSE_INDEX_NAMES
from .message import read_first_message

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    import numpy as np

    from .._core.buffer import Buffer
    from ._flatbuf import FlatTable
    from .metadata import Builder

    # a Tensor, a pyarrow.Tensor, a numpy array, or a sparse tensor (arrowipc's or pyarrow's)
    TensorLike = Any
    Span = tuple[int, int]          # (offset, length) of a buffer in a message body


__all__ = ["decode_sparse_tensor", "decode_tensor", "encode_sparse_tensor_message",
           "encode_tensor_message", "get_tensor_size", "read_tensor", "write_tensor"]


def _as_tensor(tensor: TensorLike) -> Tensor:
    if isinstance(tensor, Tensor):
        return tensor
    if hasattr(tensor, "to_numpy") and hasattr(tensor, "dim_names"):    # pyarrow.Tensor
        return Tensor.from_numpy(tensor.to_numpy(), tensor.dim_names or None)
    return Tensor.from_numpy(tensor)


def encode_tensor_message(tensor: TensorLike) -> tuple[bytes, Buffer, int]:
    """(framed metadata padded to a 64-byte boundary, body Buffer, body length) of a Tensor
    message."""
    t = _as_tensor(tensor)
    b = md._builder()
    type_id, type_off = md._encode_type(b, t.type)
    shape_off = _shape_vector(b, t.shape, t.dim_names)
    b.StartVector(8, t.ndim, 8)
    for s in reversed(t.strides):
        b.PrependInt64(s)
    strides_off = md._end_vector(b)
    body = t.data
    b.StartObject(5)
    _prepend_buffer(b, 0, body.size)
    b.PrependStructSlot(4, b.Offset(), 0)
    b.PrependUint8Slot(0, type_id, 0)
    b.PrependUOffsetTRelativeSlot(1, type_off, 0)
    b.PrependUOffsetTRelativeSlot(2, shape_off, 0)
    b.PrependUOffsetTRelativeSlot(3, strides_off, 0)
    tensor_off: int = b.EndObject()
    body_len = body.size            # unpadded, as pyarrow writes it
    b.StartObject(5)
    b.PrependInt16Slot(0, METADATA_V5, 0)
    b.PrependUint8Slot(1, HEADER_TENSOR, 0)
    b.PrependUOffsetTRelativeSlot(2, tensor_off, 0)
    b.PrependInt64Slot(3, body_len, 0)
    b.Finish(b.EndObject())
    meta = bytes(b.Output())
    meta += bytes((-(len(meta) + 8)) % 64)
    return CONTINUATION + struct.pack("<i", len(meta)) + meta, body, body_len




def _prepend_buffer(b: Builder, offset: int, length: int) -> None:
    """A Buffer struct (offset, length), built back to front as flatbuffers does."""
    b.Prep(8, 16)
    b.PrependInt64(length)
    b.PrependInt64(offset)


def _shape_vector(b: Builder, shape: Sequence[int], dim_names: Sequence[str | None] | None
                  ) -> int:
    names = [b.CreateString(n) if n else None for n in (dim_names or [None] * len(shape))]
    dims: list[int] = []
    for size, name in zip(shape, names):
        b.StartObject(2)
        b.PrependInt64Slot(0, size, 0)
        if name is not None:
            b.PrependUOffsetTRelativeSlot(1, name, 0)
        dims.append(b.EndObject())
    return md._offsets_vector(b, dims)


def _common_dtype(arrays: Sequence[np.ndarray[Any, Any]]) -> np.dtype[Any]:
    """One integer dtype for a list of index arrays (int64 unless they already agree)."""
    import numpy as np
    kinds = {a.dtype for a in arrays}
    return kinds.pop() if len(kinds) == 1 else np.dtype(np.int64)


def encode_sparse_tensor_message(tensor: TensorLike
                                 ) -> tuple[bytes, list[np.ndarray[Any, Any] | bytes], int]:
    """(framed metadata padded to a 64-byte boundary, list of body chunks, body length) of a
    SparseTensor message."""
    import numpy as np
    sp = as_sparse_tensor(tensor)
    chunks: list[np.ndarray[Any, Any] | bytes] = []
    pos = 0

    def body_buffer(arr: Any, dtype: np.dtype[Any] | None = None) -> Span:
        nonlocal pos
        raw = np.ascontiguousarray(arr, dtype=dtype).reshape(-1).view(np.uint8)
        span = (pos, raw.size)
        chunks.append(raw)
        pad = -raw.size % _BODY_ALIGNMENT
        if pad:
            chunks.append(bytes(pad))
        pos += raw.size + pad
        return span

    def int_table(dtype: np.dtype[Any]) -> int:
        return md._encode_type(b, tensor_type_of(np.dtype(dtype)))[1]

    b = md._builder()
    type_id, type_off = md._encode_type(b, sp.type)
    shape_off = _shape_vector(b, sp.shape, sp._dim_names)
    if isinstance(sp, SparseCOOTensor):
        index_id, coords = SPARSE_INDEX_COO, np.ascontiguousarray(sp._indices)
        span = body_buffer(coords)
        ind_type = int_table(coords.dtype)
        b.StartVector(8, 2, 8)
        b.PrependInt64(coords.itemsize)                 # row-major (nnz, ndim) matrix
        b.PrependInt64(coords.itemsize * sp.ndim)
        strides_off = md._end_vector(b)
        b.StartObject(4)
        _prepend_buffer(b, *span)
        b.PrependStructSlot(2, b.Offset(), 0)
        b.PrependUOffsetTRelativeSlot(0, ind_type, 0)
        b.PrependUOffsetTRelativeSlot(1, strides_off, 0)
        b.PrependBoolSlot(3, sp._canonical, False)
        index_off = b.EndObject()
    elif isinstance(sp, (SparseCSRMatrix, SparseCSCMatrix)):
        index_id = SPARSE_INDEX_CSX
        ptr_span, ind_span = body_buffer(sp._indptr), body_buffer(sp._indices)
        ptr_type, ind_type = int_table(sp._indptr.dtype), int_table(sp._indices.dtype)
        b.StartObject(5)
        _prepend_buffer(b, *ind_span)
        b.PrependStructSlot(4, b.Offset(), 0)
        _prepend_buffer(b, *ptr_span)
        b.PrependStructSlot(2, b.Offset(), 0)
        b.PrependInt16Slot(0, sp._axis, 0)              # Row = 0, Column = 1
        b.PrependUOffsetTRelativeSlot(1, ptr_type, 0)
        b.PrependUOffsetTRelativeSlot(3, ind_type, 0)
        index_off = b.EndObject()
    elif isinstance(sp, SparseCSFTensor):
        index_id = SPARSE_INDEX_CSF
        ptr_dtype, ind_dtype = _common_dtype(sp._indptr), _common_dtype(sp._indices)
        ptr_spans = [body_buffer(p, ptr_dtype) for p in sp._indptr]
        ind_spans = [body_buffer(x, ind_dtype) for x in sp._indices]
        ptr_type, ind_type = int_table(ptr_dtype), int_table(ind_dtype)
        vectors: list[int] = []
        for spans in (ptr_spans, ind_spans):
            b.StartVector(16, len(spans), 8)
            for span in reversed(spans):
                _prepend_buffer(b, *span)
            vectors.append(md._end_vector(b))
        b.StartVector(4, sp.ndim, 4)
        for a in reversed(sp._axis_order):
            b.PrependInt32(a)
        order_off = md._end_vector(b)
        b.StartObject(5)
        b.PrependUOffsetTRelativeSlot(0, ptr_type, 0)
        b.PrependUOffsetTRelativeSlot(1, vectors[0], 0)
        b.PrependUOffsetTRelativeSlot(2, ind_type, 0)
        b.PrependUOffsetTRelativeSlot(3, vectors[1], 0)
        b.PrependUOffsetTRelativeSlot(4, order_off, 0)
        index_off = b.EndObject()
    else:
        raise ArrowTypeError(f"write_tensor: no SparseTensor index for {type(sp).__name__}")
    data_span = body_buffer(sp._data)
    b.StartObject(7)
    _prepend_buffer(b, *data_span)
    b.PrependStructSlot(6, b.Offset(), 0)
    b.PrependInt64Slot(3, sp.non_zero_length, 0)
    b.PrependUOffsetTRelativeSlot(1, type_off, 0)
    b.PrependUOffsetTRelativeSlot(2, shape_off, 0)
    b.PrependUOffsetTRelativeSlot(5, index_off, 0)
    b.PrependUint8Slot(0, type_id, 0)
    b.PrependUint8Slot(4, index_id, 0)
    sparse_off = b.EndObject()
    b.StartObject(5)
    b.PrependInt16Slot(0, METADATA_V5, 0)
    b.PrependUint8Slot(1, HEADER_SPARSE_TENSOR, 0)
    b.PrependUOffsetTRelativeSlot(2, sparse_off, 0)
    b.PrependInt64Slot(3, pos, 0)
    b.Finish(b.EndObject())
    meta = bytes(b.Output())
    meta += bytes((-(len(meta) + 8)) % 64)
    return CONTINUATION + struct.pack("<i", len(meta)) + meta, chunks, pos


def _encode_any(tensor: TensorLike
                ) -> tuple[bytes, Sequence[np.ndarray[Any, Any] | bytes | Buffer], int]:
    """(head, body chunks, body length) of a Tensor or a SparseTensor message."""
    if isinstance(tensor, SparseTensor) or type(tensor).__name__.startswith("Sparse"):
        return encode_sparse_tensor_message(tensor)
    head, body, body_len = encode_tensor_message(tensor)
    return head, [body] if body.size else [], body_len


def write_tensor(tensor: TensorLike, dest: Any) -> int:
    """Write `tensor` to the file-like `dest` as one message; the number of bytes written.

    A Tensor, a pyarrow.Tensor or a numpy array becomes a Tensor message; a sparse tensor
    (arrowipc's or pyarrow's SparseCOOTensor, SparseCSRMatrix, SparseCSCMatrix or
    SparseCSFTensor) a SparseTensor message."""
    head, chunks, body_len = _encode_any(tensor)
    dest.write(head)
    written = 0
    for chunk in chunks:
        dest.write(chunk)
        written += memoryview(chunk).nbytes  # type: ignore[arg-type]  # Buffer: buffer protocol
    if body_len > written:
        dest.write(bytes(body_len - written))
    return len(head) + body_len


def get_tensor_size(tensor: TensorLike) -> int:
    """Bytes write_tensor would write for `tensor` (dense or sparse)."""
    head, _, body_len = _encode_any(tensor)
    return len(head) + body_len


def read_tensor(source: Any) -> Tensor | SparseTensor:
    """The tensor of the message at the start of `source` (bytes, a buffer, a path or a
    file-like object, left positioned after the message): a Tensor for a Tensor message, the
    sparse tensor class of its index for a SparseTensor message. Values are views of the body."""
    msg = read_first_message(source, where="tensor")
    if msg is None:
        raise EOFError("read_tensor: expected a tensor message, found the end of the stream")
    where = f"tensor message at byte {max(msg.offset, 0)}"
    assert msg.body is not None                     # a message read whole has its body
    if msg.header_type == HEADER_SPARSE_TENSOR:
        return decode_sparse_tensor(msg.header, msg.body, where)
    if msg.header_type != HEADER_TENSOR:
        raise ArrowIOError(f"read_tensor: Header-type of flatbuffer-encoded Message is not Tensor "
                           f"(the message at byte {max(msg.offset, 0)} is a {msg.type} "
                           f"message)")
    return decode_tensor(msg.header, msg.body, where)


def _value_type(t: FlatTable, where: str) -> T.DataType:
    """The value type in slots 0-1 (a union): fixed-width numbers only."""
    type_id = t.uint8(0)
    dtype = md._decode_type(type_id, t.table(1, "Type"), [], where)
    if not isinstance(dtype, T.PrimitiveType) or dtype.byte_width == 0 or \
            dtype.kind == T.Kind.BOOL:
        raise ArrowInvalid(f"{where}: a tensor holds fixed-width numbers, not {dtype}")
    return dtype


def _shape_of(t: FlatTable, slot: int, where: str) -> tuple[list[int], list[str]]:
    """(shape, names) of the TensorDim vector in `slot`, the dimension count limited first."""
    n_dims = t.vector_length(slot)
    if n_dims > MAX_TENSOR_DIMENSIONS:
        raise ArrowInvalid(f"{where}: {n_dims} dimensions, more than the limit of "
                           f"{MAX_TENSOR_DIMENSIONS}")
    dims = t.tables(slot, "TensorDim")
    shape = [d.int64(0) for d in dims]
    names = [d.string(1) or "" for d in dims]
    if any(n < 0 for n in shape):
        raise ArrowInvalid(f"{where}: negative dimension in shape {shape}")
    return shape, names


def decode_tensor(t: FlatTable, body: Buffer, where: str) -> Tensor:
    """A Tensor from a Tensor table and its message body, every claim checked against the body."""
    dtype = _value_type(t, where)
    shape, names = _shape_of(t, 2, where)
    width = dtype.byte_width
    strides = t.int64s(3) if t.has(3) else None
    if strides is None or not strides and shape:
        strides, step = [], width
        for n in reversed(shape):
            strides.append(step)
            step *= max(n, 1)
        strides.reverse()
    if len(strides) != len(shape):
        raise ArrowInvalid(f"{where}: {len(strides)} strides for {len(shape)} dimensions")
    if any(s < 0 for s in strides):
        raise ArrowInvalid(f"{where}: negative stride in {strides}")
    # strides of 0 let a few bytes stand for any shape, but its size in bytes must be a number
    # numpy (and any consumer) can hold: at most 2**63 - 1
    cells = 1
    for n in shape:
        cells *= n
    if cells * width > _MAX_TENSOR_BYTES:
        raise ArrowInvalid(f"{where}: shape {shape} of {width}-byte values is {cells * width} "
                           f"bytes, more than {_MAX_TENSOR_BYTES}")
    offset, length = _buffer_span(t.struct_int64s(4, 2), body, where, "data buffer")
    # the last byte any index reaches, computed in Python integers (no overflow)
    empty = any(n == 0 for n in shape)
    reach = 0 if empty else width + sum((n - 1) * s for n, s in zip(shape, strides))
    if reach > length:
        raise ArrowInvalid(f"{where}: shape {shape} with strides {strides} reaches byte {reach} "
                           f"but the data buffer has {length} bytes")
    return Tensor._make(dtype, body.slice(offset, length), shape, strides,
                        names if any(names) else None)


_MAX_TENSOR_BYTES = (1 << 63) - 1


def _buffer_span(span: Sequence[int] | None, body: Buffer, where: str, what: str) -> Span:
    """(offset, length) of a Buffer struct, checked to lie inside the body."""
    if span is None:
        raise ArrowInvalid(f"{where}: the {what} is missing")
    offset, length = span
    size = body.size
    if offset < 0 or length < 0 or offset > size or length > size - offset:
        raise ArrowInvalid(f"{where}: {what} [{offset}, {offset}+{length}) is outside the "
                           f"{size}-byte body")
    return offset, length


def _body_array(body: Buffer, span: Sequence[int] | None, dtype: np.dtype[Any],
                count: int | None, where: str, what: str) -> np.ndarray[Any, Any]:
    """`count` values of `dtype` from a body buffer (a view); count=None takes all whole values.
    The bytes are checked before anything is made, so a header cannot make us allocate."""
    import numpy as np
    offset, length = _buffer_span(span, body, where, what)
    width = dtype.itemsize
    if count is None:
        if length % width:
            raise ArrowInvalid(f"{where}: {what} has {length} bytes, not a multiple of the "
                               f"{width}-byte {dtype} values")
        count = length // width
    elif count * width > length:
        raise ArrowInvalid(f"{where}: {what} should hold {count} {dtype} values "
                           f"({count * width} bytes) but has {length} bytes")
    if count == 0:
        return np.empty(0, dtype=dtype)
    # a Buffer is read through the buffer protocol, which numpy's stubs do not name
    values: np.ndarray[Any, Any] = np.frombuffer(
        body.slice(offset, count * width), dtype=dtype, count=count)  # type: ignore[call-overload]
    return values


def _index_dtype(idx: FlatTable, slot: int, where: str, what: str) -> np.dtype[Any]:
    """The numpy dtype of an Int table naming an index type."""
    t = idx.table(slot, "Int")
    if t is None:
        raise ArrowInvalid(f"{where}: the sparse index has no {what}")
    return numpy_dtype_of(md._decode_type(TYPE_INT, t, [], where))


def decode_sparse_tensor(t: FlatTable, body: Buffer, where: str) -> SparseTensor:
    """A sparse tensor from a SparseTensor table and its message body, every claim checked."""
    import numpy as np
    dtype = _value_type(t, where)
    names: list[str] | None
    shape, names = _shape_of(t, 2, where)
    names = names if any(names) else None
    if not shape:
        raise ArrowInvalid(f"{where}: a sparse tensor needs at least one dimension")
    nnz = t.int64(3)
    if nnz < 0:
        raise ArrowInvalid(f"{where}: negative non_zero_length {nnz}")
    index_id = t.uint8(4)
    if index_id not in _SPARSE_INDEX_NAMES:
        raise ArrowInvalid(f"{where}: sparse index type {index_id}, expected 1 (COO), 2 (CSX) "
                           f"or 3 (CSF)")
    idx = t.table(5, _SPARSE_INDEX_NAMES[index_id])
    if idx is None:
        raise ArrowInvalid(f"{where}: the SparseTensor table has no sparse index")
    data = _body_array(body, t.struct_int64s(6, 2), numpy_dtype_of(dtype), nnz, where,
                       "data buffer")
    ndim = len(shape)
    if index_id == SPARSE_INDEX_COO:
        ind = _index_dtype(idx, 0, where, "indicesType")
        w = ind.itemsize
        strides = idx.int64s(1) if idx.has(1) else [w * ndim, w]
        if len(strides) != 2 or any(s < 0 for s in strides):
            raise ArrowInvalid(f"{where}: COO indicesStrides {strides}, expected two "
                               f"non-negative byte strides")
        offset, length = _buffer_span(idx.struct_int64s(2, 2), body, where,
                                      "COO indices buffer")
        # the matrix's values must be present (strides only lay them out): this also bounds
        # what the checks below allocate by the body's size, whatever strides claim
        if nnz * ndim * w > length:
            raise ArrowInvalid(f"{where}: COO indices buffer should hold {nnz}x{ndim} {ind} "
                               f"values ({nnz * ndim * w} bytes) but has {length} bytes")
        reach = 0 if nnz == 0 else w + (nnz - 1) * strides[0] + (ndim - 1) * strides[1]
        if reach > length - length % w:
            raise ArrowInvalid(f"{where}: {nnz}x{ndim} COO indices with strides {strides} "
                               f"reach byte {reach} but the indices buffer has {length} bytes")
        if nnz:
            flat = np.frombuffer(  # type: ignore[call-overload]  # Buffer: buffer protocol
                body.slice(offset, length - length % w), dtype=ind)
            coords = np.lib.stride_tricks.as_strided(flat, (nnz, ndim), tuple(strides),
                                                     writeable=False)
        else:
            coords = np.empty((0, ndim), dtype=ind)
        return SparseCOOTensor._make(data, coords, shape, names, idx.boolean(3), where)
    if index_id == SPARSE_INDEX_CSX:
        if ndim != 2:
            raise ArrowInvalid(f"{where}: a CSX index is for matrices, got shape {shape}")
        axis = idx.int16(0)
        if axis not in (0, 1):
            raise ArrowInvalid(f"{where}: compressedAxis {axis}, expected 0 (Row) or 1 (Column)")
        indptr = _body_array(body, idx.struct_int64s(2, 2), _index_dtype(idx, 1, where,
                             "indptrType"), shape[axis] + 1, where, "indptr buffer")
        indices = _body_array(body, idx.struct_int64s(4, 2), _index_dtype(idx, 3, where,
                              "indicesType"), nnz, where, "indices buffer")
        cls = SparseCSRMatrix if axis == 0 else SparseCSCMatrix
        return cls._make(data, indptr, indices, shape, names, where)
    ptr_dtype = _index_dtype(idx, 0, where, "indptrType")
    ind_dtype = _index_dtype(idx, 2, where, "indicesType")
    spans = []
    for slot, want, what in ((1, ndim - 1, "indptrBuffers"), (3, ndim, "indicesBuffers")):
        raw, n = idx.structs(slot, 16)
        if n != want:
            raise ArrowInvalid(f"{where}: CSF {what} has {n} buffers, expected {want} for "
                               f"{ndim} dimensions")
        spans.append([struct.unpack_from("<qq", raw, 16 * i) for i in range(n)])
    order = idx.int32s(4) if idx.has(4) else []
    if len(order) != ndim:
        raise ArrowInvalid(f"{where}: CSF axisOrder has {len(order)} entries, expected {ndim}")
    level_indptr = [_body_array(body, s, ptr_dtype, None, where, f"CSF indptr buffer {i}")
                    for i, s in enumerate(spans[0])]
    level_indices = [_body_array(body, s, ind_dtype, None, where, f"CSF indices buffer {i}")
                     for i, s in enumerate(spans[1])]
    return SparseCSFTensor._make(data, level_indptr, level_indices, shape, order, names, where)
