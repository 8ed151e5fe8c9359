"""Tensor messages: write_tensor, read_tensor, get_tensor_size (pyarrow.ipc's functions).

A Tensor message is one encapsulated message: a Message table whose header is a Tensor table
(value type, shape with optional dimension names, strides in bytes, and the (offset, length) of the
data in the body), followed by the body. The metadata is padded so the body starts 64-byte
aligned, as pyarrow writes it. SparseTensor messages are recognised and refused with
ArrowNotImplementedError.
"""
from __future__ import annotations

import struct

from .. import types as T
from ..errors import ArrowInvalid, ArrowIOError, ArrowNotImplementedError
from ..tensor import Tensor
from . import metadata as md
from .format import (CONTINUATION, HEADER_SPARSE_TENSOR, HEADER_TENSOR, MAX_TENSOR_DIMENSIONS,
                     METADATA_V5)
from .message import read_message_from
from .sources import open_source


def _as_tensor(tensor) -> Tensor:
    if isinstance(tensor, Tensor):
        return tensor
    if hasattr(tensor, "to_numpy") and hasattr(tensor, "dim_names"):    # pyarrow.Tensor
        return Tensor.from_numpy(tensor.to_numpy(), tensor.dim_names or None)
    return Tensor.from_numpy(tensor)


def encode_tensor_message(tensor) -> tuple:
    """(framed metadata padded to a 64-byte boundary, body Buffer) of a Tensor message."""
    t = _as_tensor(tensor)
    b = md._builder()
    type_id, type_off = md._encode_type(b, t.type)
    names = [b.CreateString(n) if n else None for n in (t.dim_names or [None] * t.ndim)]
    dims = []
    for size, name in zip(t.shape, names):
        b.StartObject(2)
        b.PrependInt64Slot(0, size, 0)
        if name is not None:
            b.PrependUOffsetTRelativeSlot(1, name, 0)
        dims.append(b.EndObject())
    shape_off = md._offsets_vector(b, dims)
    b.StartVector(8, t.ndim, 8)
    for s in reversed(t.strides):
        b.PrependInt64(s)
    strides_off = md._end_vector(b)
    body = t.data
    b.StartObject(5)
    b.Prep(8, 16)
    b.PrependInt64(body.size)         # Buffer struct: offset 0, length
    b.PrependInt64(0)
    b.PrependStructSlot(4, b.Offset(), 0)
    b.PrependUint8Slot(0, type_id, 0)
    b.PrependUOffsetTRelativeSlot(1, type_off, 0)
    b.PrependUOffsetTRelativeSlot(2, shape_off, 0)
    b.PrependUOffsetTRelativeSlot(3, strides_off, 0)
    tensor_off = b.EndObject()
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


def write_tensor(tensor, dest) -> int:
    """Write `tensor` (a Tensor, a pyarrow.Tensor or a numpy array) to the file-like `dest` as
    one Tensor message; the number of bytes written."""
    head, body, body_len = encode_tensor_message(tensor)
    dest.write(head)
    if body.size:
        dest.write(body)
    if body_len > body.size:
        dest.write(bytes(body_len - body.size))
    return len(head) + body_len


def get_tensor_size(tensor) -> int:
    """Bytes write_tensor would write for `tensor`."""
    head, _, body_len = encode_tensor_message(tensor)
    return len(head) + body_len


def read_tensor(source) -> Tensor:
    """The Tensor of the Tensor message at the start of `source` (bytes, a buffer, a path or a
    file-like object, left positioned after the message). Its values are a view of the body."""
    msg = read_message_from(open_source(source), where="tensor")
    if msg is None:
        raise EOFError("read_tensor: expected a tensor message, found the end of the stream")
    if msg.header_type == HEADER_SPARSE_TENSOR:
        raise ArrowNotImplementedError("read_tensor: sparse tensor messages are not supported")
    if msg.header_type != HEADER_TENSOR:
        raise ArrowIOError(f"read_tensor: Message not expected type tensor but got {msg.type}")
    return decode_tensor(msg.header, msg.body, f"tensor message at byte {max(msg.offset, 0)}")


def decode_tensor(t, body, where: str) -> Tensor:
    """A Tensor from a Tensor table and its message body, every claim checked against the body."""
    type_id = t.uint8(0)
    dtype = md._decode_type(type_id, t.table(1, "Type"), [], where)
    if not isinstance(dtype, T.PrimitiveType) or dtype.byte_width == 0 or \
            dtype.kind == T.Kind.BOOL:
        raise ArrowInvalid(f"{where}: a tensor holds fixed-width numbers, not {dtype}")
    n_dims = t.vector_length(2)
    if n_dims > MAX_TENSOR_DIMENSIONS:
        raise ArrowInvalid(f"{where}: {n_dims} dimensions, more than the limit of "
                           f"{MAX_TENSOR_DIMENSIONS}")
    dims = t.tables(2, "TensorDim")
    shape = [d.int64(0) for d in dims]
    names = [d.string(1) or "" for d in dims]
    if any(n < 0 for n in shape):
        raise ArrowInvalid(f"{where}: negative dimension in shape {shape}")
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
    data = t.struct_int64s(4, 2)
    if data is None:
        raise ArrowInvalid(f"{where}: the Tensor table has no data buffer")
    offset, length = data
    size = body.size
    if offset < 0 or length < 0 or offset > size or length > size - offset:
        raise ArrowInvalid(f"{where}: data buffer [{offset}, {offset}+{length}) is outside the "
                           f"{size}-byte body")
    # the last byte any index reaches, computed in Python integers (no overflow)
    empty = any(n == 0 for n in shape)
    reach = 0 if empty else width + sum((n - 1) * s for n, s in zip(shape, strides))
    if reach > length:
        raise ArrowInvalid(f"{where}: shape {shape} with strides {strides} reaches byte {reach} "
                           f"but the data buffer has {length} bytes")
    return Tensor._make(dtype, body.slice(offset, length), shape, strides,
                        names if any(names) else None)
