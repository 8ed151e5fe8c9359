# cython: language_level=3
"""RecordBatch encoding: ArrayData -> field nodes, body buffers and the header flatbuffer.

The writer flattens a batch in pre-order, truncates sliced buffers (offsets rebased to 0, bitmaps
shifted to bit 0), lays buffers out at the requested alignment and encodes the Message flatbuffer
front to back without a general-purpose builder. Field nodes, buffer spans and variadic counts
stay C arrays from flattening to the header: a batch costs a Python object per buffer only where
the body's gather list needs one. The body is returned as a gather list: nothing is copied here
except what slicing forces, and, when compressing, the frames, which the codec writes back to back
into one block per batch (BodyCompressor).
"""
from libc.stdint cimport uint8_t, uint16_t, int16_t, uint32_t, int32_t, int64_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcmp, memcpy, memset
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING

from arrowipc._core.buffer cimport Buffer, allocate, mutable_data, py_buffer, slice_unchecked
from arrowipc._core.arraydata cimport ArrayData, make_array_data
from arrowipc.ipc._codecs cimport (arrowipc_pack_item, pack_capacity, pack_body, pack_failure,
                                   ARROWIPC_CODEC_OK)

from arrowipc._core.bitmap import bitmap_view, count_set_bits
from arrowipc._core.offsets import rebase_offsets, read_offset_pair
from arrowipc.errors import ArrowInvalid, ArrowNotImplementedError
from arrowipc.ipc.compression import RAW_PREFIX as _RAW_PREFIX_OBJECT
from arrowipc.types import ExtensionType

from arrowipc._core.kinds cimport *

# Padding chunks, so gather lists never allocate for padding.
PADDING = tuple(bytes(i) for i in range(64))
cdef tuple _PADDING = PADDING
cdef bytes _EMPTY = b""
cdef bytes _RAW_PREFIX = _RAW_PREFIX_OBJECT    # the very object the writer looks for


cdef class FlatBatch:
    """A batch flattened for IPC: field nodes and variadic buffer counts (C arrays, as the
    header takes them), and the body buffers (Buffer, or None for length 0)."""
    cdef int64_t* _nodes                # (length, null count) pairs
    cdef Py_ssize_t _n_nodes, _nodes_cap
    cdef int64_t* _variadic
    cdef Py_ssize_t _n_variadic, _variadic_cap
    cdef int64_t _inline_nodes[64]      # the first 32 nodes: no allocation for most batches
    cdef public list buffers            # [Buffer or None, ...]
    cdef public int version             # metadata version being written (V4 unions differ)

    def __cinit__(self):
        self._nodes = self._inline_nodes
        self._nodes_cap = 32
        self._variadic = NULL

    def __init__(self, int version=4):
        self.buffers = []
        self.version = version

    def __dealloc__(self):
        if self._nodes != self._inline_nodes:
            free(self._nodes)
        free(self._variadic)

    cdef int add_node(self, int64_t length, int64_t null_count) except -1:
        cdef int64_t* grown
        if self._n_nodes == self._nodes_cap:
            grown = <int64_t*>malloc(<size_t>(32 * self._nodes_cap))
            if grown == NULL:
                raise MemoryError()
            memcpy(grown, self._nodes, <size_t>(16 * self._n_nodes))
            if self._nodes != self._inline_nodes:
                free(self._nodes)
            self._nodes = grown
            self._nodes_cap *= 2
        self._nodes[2 * self._n_nodes] = length
        self._nodes[2 * self._n_nodes + 1] = null_count
        self._n_nodes += 1
        return 0

    cdef int add_variadic(self, int64_t count) except -1:
        cdef Py_ssize_t cap = 8 if self._variadic_cap == 0 else 2 * self._variadic_cap
        cdef int64_t* grown
        if self._n_variadic == self._variadic_cap:
            grown = <int64_t*>realloc(self._variadic, <size_t>(8 * cap))
            if grown == NULL:
                raise MemoryError()
            self._variadic = grown
            self._variadic_cap = cap
        self._variadic[self._n_variadic] = count
        self._n_variadic += 1
        return 0

    @property
    def nodes(self):
        """[(length, null count)] of the field nodes, in pre-order."""
        return [(self._nodes[2 * i], self._nodes[2 * i + 1]) for i in range(self._n_nodes)]

    @property
    def variadic_counts(self):
        """[number of variadic data buffers] of the view columns, in pre-order."""
        return [self._variadic[i] for i in range(self._n_variadic)]

    def raw_body_size(self):
        """Bytes of the body uncompressed: every buffer padded to 8."""
        cdef int64_t total = 0, n
        for b in self.buffers:
            if b is None:
                continue
            n = (<Buffer>b).size if type(b) is Buffer else len(b)
            total += n + ((-n) & 7)
        return total


cdef inline int64_t _run_end_at(const uint8_t* p, int width, int64_t i) noexcept nogil:
    # Run ends are int16, int32 or int64 (validated on read, checked by the builders).
    if width == 2:
        return (<const int16_t*>p)[i]
    if width == 4:
        return (<const int32_t*>p)[i]
    return (<const int64_t*>p)[i]


def ree_physical_slice(ArrayData d, int64_t offset, int64_t length):
    """(run_ends, values) ArrayData covering logical [offset, offset + length) of a run-end
    encoded array, with run ends rebased to start at the slice (a new buffer when sliced)."""
    cdef ArrayData run_ends = d.children[0], values = d.children[1]
    cdef int width = run_ends.type.byte_width
    cdef int64_t n = run_ends.length, lo = 0, hi, mid, count = 0, end, i
    cdef const uint8_t* ends = NULL
    cdef Buffer out
    if n:
        ends = (<Buffer>run_ends.buffers[1]).ptr + run_ends.offset * width
    cdef uint8_t* dst
    if offset == 0 and run_ends.offset == 0 and values.offset == 0 and \
            length == (_run_end_at(ends, width, n - 1) if n else 0):
        return run_ends, values
    with nogil:
        hi = n                      # the first run ending after `offset`: run ends ascend
        while lo < hi:
            mid = lo + (hi - lo) // 2
            if _run_end_at(ends, width, mid) <= offset:
                lo = mid + 1
            else:
                hi = mid
        hi = lo                     # one past the last run the slice touches
        while hi < n and count < length:
            end = _run_end_at(ends, width, hi)
            hi += 1
            count = end - offset if end - offset < length else length
    out = allocate((hi - lo) * width, False)
    dst = mutable_data(out)
    with nogil:
        for i in range(hi - lo):
            end = _run_end_at(ends, width, lo + i) - offset
            if end > length:
                end = length
            if width == 2:
                (<int16_t*>dst)[i] = <int16_t>end
            elif width == 4:
                (<int32_t*>dst)[i] = <int32_t>end
            else:
                (<int64_t*>dst)[i] = end
    new_run_ends = make_array_data(run_ends.type, hi - lo, 0, 0, [None, out], [], None)
    sliced_values = make_array_data(values.type, hi - lo, values.offset + lo,
                                    0 if values.null_count == 0 else -1, values.buffers,
                                    values.children, values.dictionary)
    return new_run_ends, sliced_values


cdef inline object storage_of(object t):
    """The storage type of an extension type, else the type itself (no Python property call)."""
    return t.storage if isinstance(t, ExtensionType) else t


cdef int64_t node_null_count(ArrayData d, int64_t offset, int64_t length) except -1:
    """Null count of d over [offset, offset + length) (offset absolute, including d.offset)."""
    cdef object v
    cdef int kind = storage_of(d.type).kind
    if length == 0 or kind == K_SPARSE_UNION or kind == K_DENSE_UNION or kind == K_REE:
        return 0            # no validity bitmap of their own
    if kind == K_NULL:
        return length
    if d.null_count == 0:
        return 0
    v = d.buffers[0] if d.buffers else None
    if v is None:
        return 0
    if d.null_count > 0 and offset == d.offset and length == d.length:
        return d.null_count
    return length - count_set_bits(v, offset, length)


cdef object bitmap_part(Buffer buf, int64_t offset, int64_t length):
    """The bitmap of slots [offset, offset + length) from bit 0: the buffer itself when it is
    exactly that, a zero-copy slice at a whole byte, a shifted copy otherwise (bitmap_view)."""
    cdef int64_t nbytes = (length + 7) // 8
    if buf is None:
        if length == 0:
            return None
        raise ArrowInvalid(f"bitmap: bits [{offset}, {offset}+{length}) need "
                           f"{(offset + length + 7) // 8} bytes but the bitmap is missing")
    if offset % 8 == 0 and 0 <= offset and 0 <= length and offset // 8 <= buf.size and \
            nbytes <= buf.size - offset // 8:
        if offset == 0 and nbytes == buf.size:
            return buf
        return slice_unchecked(buf, offset // 8, nbytes)
    return bitmap_view(buf, offset, length)       # checks the span, shifts the bits


cdef object offsets_part(Buffer offsets, int64_t offset, int64_t length, int width,
                         int64_t* first, int64_t* last):
    """Offsets [offset, offset + length] rebased to start at 0 (the buffer itself, or a slice of
    it, when they already do); their first and last values in *first and *last."""
    cdef int64_t count
    cdef const uint8_t* p
    if offsets is None:
        if length == 0:
            first[0] = last[0] = 0
            return allocate(width, True)     # one zero offset, as for an empty offsets buffer
        raise ArrowInvalid(f"offsets: {length + 1} offsets from index {offset} need "
                           f"{(offset + length + 1) * width} bytes but the offsets buffer is "
                           f"missing")
    count = offsets.size // width
    if 0 <= offset and 0 <= length and offset < count and length <= count - offset - 1:
        p = offsets.ptr + offset * width
        if width == 4:
            first[0] = (<const int32_t*>p)[0]
            last[0] = (<const int32_t*>p)[length]
        else:
            first[0] = (<const int64_t*>p)[0]
            last[0] = (<const int64_t*>p)[length]
        if first[0] == 0:
            if offset == 0 and (length + 1) * width == offsets.size:
                return offsets
            return slice_unchecked(offsets, offset * width, (length + 1) * width)
    out, f, l = rebase_offsets(offsets, offset, length, width)   # checks, rebases, or empty
    first[0] = f
    last[0] = l
    return out


cdef flatten_node(FlatBatch fb, ArrayData d, int64_t offset, int64_t length, int depth):
    """Append the node for d's slots [offset, offset + length) and its buffers, then children's."""
    cdef object t = storage_of(d.type)
    cdef int kind = t.kind
    cdef int64_t nulls, width, first, last, size
    cdef Buffer values
    cdef ArrayData child
    if depth > 64:
        raise ArrowInvalid("cannot write arrays nested more than 64 deep")
    nulls = node_null_count(d, offset, length)      # 0 for unions and run-end encoded
    fb.add_node(length, nulls)
    if kind == K_NULL:
        return
    if kind == K_SPARSE_UNION or kind == K_DENSE_UNION:
        if fb.version < 4:
            fb.buffers.append(None)          # V4 unions have a validity slot: write it empty
        fb.buffers.append(d.buffers[0].slice(offset, length))
        if kind == K_SPARSE_UNION:
            for child in d.children:
                flatten_node(fb, child, child.offset + offset, length, depth + 1)
        else:
            fb.buffers.append(d.buffers[1].slice(offset * 4, length * 4))
            for child in d.children:       # dense children are written whole
                flatten_node(fb, child, child.offset, child.length, depth + 1)
        return
    if kind == K_REE:
        ends_data, values_data = ree_physical_slice(d, offset, length)
        flatten_node(fb, ends_data, ends_data.offset, ends_data.length, depth + 1)
        flatten_node(fb, values_data, values_data.offset, values_data.length, depth + 1)
        return

    # validity: omitted (length 0) when there are no nulls
    if nulls == 0 or d.buffers[0] is None:
        fb.buffers.append(None)
    else:
        fb.buffers.append(bitmap_part(d.buffers[0], offset, length))

    if kind == K_BOOL:
        fb.buffers.append(bitmap_part(d.buffers[1], offset, length))
        return
    if kind == K_FIXED or kind == K_DICTIONARY:
        width = t.index_type.byte_width if kind == K_DICTIONARY else t.byte_width
        values = d.buffers[1]
        if width == 0:              # fixed_size_binary(0): no bytes, whatever the length
            fb.buffers.append(None)
            return
        if values is None or (length and (offset > values.size // width or
                                          length > values.size // width - offset)):
            raise ArrowInvalid(f"values buffer of a {t} array is too small for {length} values "
                               f"at offset {offset}")
        # bounds checked just above
        if offset == 0 and length * width == values.size:
            fb.buffers.append(values)
        else:
            fb.buffers.append(slice_unchecked(values, offset * width, length * width))
        return
    if kind == K_BINARY or kind == K_LARGE_BINARY:
        width = 4 if kind == K_BINARY else 8
        fb.buffers.append(offsets_part(d.buffers[1], offset, length, width, &first, &last))
        data = d.buffers[2]
        if data is None:
            fb.buffers.append(None)
        elif first == 0 and last == (<Buffer>data).size:
            fb.buffers.append(data)
        else:
            fb.buffers.append(data.slice(first, last - first))
        return
    if kind == K_LIST or kind == K_LARGE_LIST:
        width = 4 if kind == K_LIST else 8
        fb.buffers.append(offsets_part(d.buffers[1], offset, length, width, &first, &last))
        child = d.children[0]
        flatten_node(fb, child, child.offset + first, last - first, depth + 1)
        return
    if kind == K_VIEW:
        fb.buffers.append(d.buffers[1].slice(offset * 16, length * 16))
        fb.buffers.extend(d.buffers[2:])   # variadic data buffers, referenced by the views as-is
        fb.add_variadic(len(d.buffers) - 2)
        return
    if kind == K_LIST_VIEW or kind == K_LARGE_LIST_VIEW:
        width = 4 if kind == K_LIST_VIEW else 8
        fb.buffers.append(d.buffers[1].slice(offset * width, length * width))
        fb.buffers.append(d.buffers[2].slice(offset * width, length * width))
        child = d.children[0]                # offsets are not rebased: the child goes whole
        flatten_node(fb, child, child.offset, child.length, depth + 1)
        return
    if kind == K_FIXED_SIZE_LIST:
        size = t.list_size
        child = d.children[0]
        flatten_node(fb, child, child.offset + offset * size, length * size, depth + 1)
        return
    if kind == K_STRUCT:
        # struct children are addressed with the parent's offset added to their own
        for child in d.children:
            flatten_node(fb, child, child.offset + offset, length, depth + 1)
        return
    raise ArrowNotImplementedError(f"writing {t} is not supported yet")


def flatten_columns(list columns, int64_t num_rows, int version=4):
    """FlatBatch for a record batch's columns (ArrayData), in pre-order."""
    cdef FlatBatch fb = FlatBatch(version)
    cdef ArrayData d
    for d in columns:
        if d.length != num_rows:
            raise ArrowInvalid(f"column of length {d.length} in a batch of {num_rows} rows")
        flatten_node(fb, d, d.offset, d.length, 1)
    return fb


def layout_body(list buffers, int alignment):
    """(buffer spans [(offset, length)], gather parts, body length) at `alignment`.

    A buffer is a bytes-like object, None (length 0), or a tuple of bytes-likes written back to
    back (a compressed buffer: length prefix, then the frame or the raw bytes).
    """
    cdef list spans = []
    cdef list parts = []
    cdef int64_t pos = 0, n, pad
    for b in buffers:
        if b is None:
            spans.append((pos, 0))
            continue
        if type(b) is tuple:
            n = 0
            for x in b:
                n += len(x)
            spans.append((pos, n))
            parts.extend(b)
            pos += n
        else:
            n = len(b)
            spans.append((pos, n))
            if n:
                parts.append(b)
            pos += n
        if n:
            pad = (alignment - pos % alignment) % alignment
            if pad:
                parts.append(PADDING[pad])
                pos += pad
    return spans, parts, pos


cdef inline void put_i16(char* p, int64_t at, int16_t v) noexcept:
    memcpy(p + at, &v, 2)


cdef inline void put_i32(char* p, int64_t at, int32_t v) noexcept:
    memcpy(p + at, &v, 4)


cdef inline void put_i64(char* p, int64_t at, int64_t v) noexcept:
    memcpy(p + at, &v, 8)


# -- back-to-front flatbuffer encoding ----------------------------------------------------------
#
# Message headers and the file footer are built the way a flatbuffers builder builds them: from the end of the
# buffer towards its start, children before parents, each table's vtable written just below it
# (or shared with an identical earlier one), fields equal to their schema default left out, and
# each table's fields pushed largest first. pyarrow (and Java) writers lay their headers out
# this way, so the batch headers written here are byte for byte theirs, and never larger.

cdef struct _Rev:
    char* end           # one past the buffer's last byte; data grows down from here
    int64_t size        # bytes written so far (positions below are "bytes from the end")
    int64_t minalign    # largest alignment used: the finished buffer's size is a multiple of it
    int64_t vtables[8]  # positions of the vtables written so far (shared when identical)
    int n_vtables
    int64_t table_start
    int n_fields
    int64_t field_at[8]     # positions of the current table's fields, by slot
    int field_slot[8]


cdef inline void rv_pad(_Rev* b, int64_t n) noexcept nogil:
    if n:
        b.size += n
        memset(b.end - b.size, 0, n)


cdef inline void rv_prealign(_Rev* b, int64_t length, int64_t align) noexcept nogil:
    """Pad so that `length` more bytes end on an `align` boundary."""
    if align > b.minalign:
        b.minalign = align
    rv_pad(b, (-(b.size + length)) & (align - 1))


cdef inline int64_t rv_push(_Rev* b, const void* v, int64_t n) noexcept nogil:
    """An n-byte scalar, aligned to n; returns its position."""
    rv_prealign(b, 0, n)
    b.size += n
    memcpy(b.end - b.size, v, n)
    return b.size


cdef inline int64_t rv_i64(_Rev* b, int64_t v) noexcept nogil:
    return rv_push(b, &v, 8)


cdef inline int64_t rv_u32(_Rev* b, uint32_t v) noexcept nogil:
    return rv_push(b, &v, 4)


cdef inline int64_t rv_uoffset(_Rev* b, int64_t target) noexcept nogil:
    """A uoffset to the object at position `target`; returns its own position."""
    rv_prealign(b, 0, 4)
    return rv_u32(b, <uint32_t>(b.size + 4 - target))


cdef inline int64_t rv_pairs(_Rev* b, const int64_t* v, int64_t n) noexcept nogil:
    """A vector of n 16-byte structs of two int64 (FieldNode, Buffer); returns its position."""
    if n:                               # an empty vector is only its length: no padding
        rv_prealign(b, 16 * n, 4)
        rv_prealign(b, 16 * n, 8)
    b.size += 16 * n
    memcpy(b.end - b.size, v, 16 * n)
    return rv_u32(b, <uint32_t>n)


cdef inline int64_t rv_longs(_Rev* b, const int64_t* v, int64_t n) noexcept nogil:
    if n:
        rv_prealign(b, 8 * n, 4)
        rv_prealign(b, 8 * n, 8)
    b.size += 8 * n
    memcpy(b.end - b.size, v, 8 * n)
    return rv_u32(b, <uint32_t>n)


cdef inline void rv_start(_Rev* b) noexcept nogil:
    b.table_start = b.size
    b.n_fields = 0


cdef inline void rv_field(_Rev* b, int slot, int64_t at) noexcept nogil:
    b.field_slot[b.n_fields] = slot
    b.field_at[b.n_fields] = at
    b.n_fields += 1


cdef inline void rv_field_i64(_Rev* b, int slot, int64_t v) noexcept nogil:
    if v != 0:                          # the schema default: left out
        rv_field(b, slot, rv_i64(b, v))


cdef inline void rv_field_offset(_Rev* b, int slot, int64_t target) noexcept nogil:
    if target != 0:                     # no object
        rv_field(b, slot, rv_uoffset(b, target))


cdef inline void rv_field_small(_Rev* b, int slot, int v, int width) noexcept nogil:
    cdef int16_t v16 = <int16_t>v
    cdef uint8_t v8 = <uint8_t>v
    if v != 0:
        rv_field(b, slot, rv_push(b, &v16, 2) if width == 2 else rv_push(b, &v8, 1))


cdef int64_t rv_end(_Rev* b) noexcept nogil:
    """Close the current table: its vtable (or an identical earlier one); returns its position."""
    cdef int32_t zero = 0
    cdef int64_t table_at = rv_push(b, &zero, 4)
    cdef int i, top = -1
    cdef int16_t vt[20]
    cdef int64_t vt_bytes, vt_at = -1
    cdef int32_t soffset
    for i in range(b.n_fields):
        if b.field_slot[i] > top:
            top = b.field_slot[i]
    vt_bytes = 4 + 2 * (top + 1)
    memset(vt, 0, sizeof(vt))
    vt[0] = <int16_t>vt_bytes
    vt[1] = <int16_t>(table_at - b.table_start)
    for i in range(b.n_fields):
        vt[2 + b.field_slot[i]] = <int16_t>(table_at - b.field_at[i])
    for i in range(b.n_vtables):
        if (b.vtables[i] >= vt_bytes and memcmp(b.end - b.vtables[i], vt, 2) == 0 and
                memcmp(b.end - b.vtables[i], vt, vt_bytes) == 0):
            vt_at = b.vtables[i]
            break
    if vt_at < 0:
        b.size += vt_bytes
        memcpy(b.end - b.size, vt, vt_bytes)
        vt_at = b.size
        if b.n_vtables < 8:
            b.vtables[b.n_vtables] = vt_at
            b.n_vtables += 1
    soffset = <int32_t>(vt_at - table_at)
    memcpy(b.end - table_at, &soffset, 4)
    return table_at


cdef inline void rv_init(_Rev* b, char* buf, int64_t capacity) noexcept nogil:
    memset(b, 0, sizeof(_Rev))
    b.end = buf + capacity
    b.minalign = 1


cdef bytes rv_finish_framed(_Rev* b, int64_t message_at, bint legacy):
    """Finish the flatbuffer (root offset, size a multiple of its alignment) and frame it: the
    continuation marker and length (the length alone, legacy), the flatbuffer, then zeros to the
    next 8-byte boundary of the whole."""
    cdef int64_t prefix = 4 if legacy else 8, padded
    cdef bytes out
    cdef char* o
    rv_prealign(b, 4, b.minalign)
    rv_uoffset(b, message_at)
    padded = (b.size + prefix + 7) // 8 * 8 - prefix
    out = PyBytes_FromStringAndSize(NULL, prefix + padded)
    o = PyBytes_AS_STRING(out)
    if not legacy:
        put_i32(o, 0, -1)
    put_i32(o, prefix - 4, <int32_t>padded)
    memcpy(o + prefix, b.end - b.size, b.size)
    memset(o + prefix + b.size, 0, padded - b.size)
    return out


cdef int64_t rv_blob(_Rev* b, bytes blob, int64_t table_pos, int64_t align):
    """Place a self-contained flatbuffer region (built back to front, so aligned relative to its
    end, to at most `align`) with its end aligned; returns the position of the table it holds.
    Every offset inside the region is relative, so it is copied verbatim."""
    cdef int64_t n = len(blob)
    rv_prealign(b, 0, align)
    b.size += n
    memcpy(b.end - b.size, PyBytes_AS_STRING(blob), n)
    return b.size - table_pos


cdef int64_t rv_blocks(_Rev* b, list blocks) except -1:
    """[Block] vector: (int64 offset, int32 metadata length, 4 bytes padding, int64 body length)."""
    cdef int64_t n = len(blocks), i = 0
    cdef char* p
    if n:
        rv_prealign(b, 24 * n, 4)
        rv_prealign(b, 24 * n, 8)
    b.size += 24 * n
    p = b.end - b.size
    memset(p, 0, 24 * n)
    for off, meta_len, body_len in blocks:
        put_i64(p, 24 * i, off)
        put_i32(p, 24 * i + 8, meta_len)
        put_i64(p, 24 * i + 16, body_len)
        i += 1
    return rv_u32(b, <uint32_t>n)


cdef inline int64_t rv_string(_Rev* b, bytes s):
    cdef int64_t n = len(s)
    rv_prealign(b, n + 1, 4)
    rv_pad(b, 1)                        # the terminating zero
    b.size += n
    memcpy(b.end - b.size, PyBytes_AS_STRING(s), n)
    return rv_u32(b, <uint32_t>n)


cdef int64_t rv_metadata(_Rev* b, dict metadata) except -1:
    """[KeyValue] vector, in the mapping's order; returns its position."""
    cdef list tables = []
    cdef int64_t key_at, value_at, i, n = len(metadata)
    for k, v in metadata.items():
        key_at = rv_string(b, bytes(k))
        value_at = rv_string(b, bytes(v))
        rv_start(b)
        rv_field_offset(b, 1, value_at)
        rv_field_offset(b, 0, key_at)
        tables.append(rv_end(b))
    rv_prealign(b, 4 * n, 4)
    for i in range(n - 1, -1, -1):
        rv_uoffset(b, tables[i])
    return rv_u32(b, <uint32_t>n)


# -- compressed bodies ---------------------------------------------------------------------------

cdef inline int check_alignment(int64_t alignment) except -1:
    # padding is computed with a mask
    if alignment <= 0 or alignment & (alignment - 1):
        raise ValueError(f"buffer alignment must be a power of two, got {alignment}")
    return 0


cdef class _PackItems:
    """The C array of a pack_body call (shared by the bodies of a window of batches)."""
    cdef arrowipc_pack_item* items
    cdef Py_ssize_t n

    def __cinit__(self, Py_ssize_t n):
        self.items = <arrowipc_pack_item*>malloc(sizeof(arrowipc_pack_item) * (n + 1))
        if self.items == NULL:
            raise MemoryError()
        self.n = n

    def __dealloc__(self):
        free(self.items)


cdef class PackedBody:
    """A message body's buffers compressed (BodyCompressor.pack): length prefixes, frames and
    their padding in a block of the writer's own memory, the caller's buffers where stored raw."""
    cdef _PackItems _owner
    cdef const arrowipc_pack_item* items   # this body's items in _owner
    cdef Py_ssize_t n
    cdef list sources                       # Buffer or None, from sources[lo]
    cdef Py_ssize_t lo
    cdef Buffer block
    cdef readonly int64_t alignment

    def __len__(self):
        return self.n


cdef class BodyCompressor:
    """Compresses the body buffers of record batches with the C codecs: one call per batch (or
    per window of batches) that compresses every buffer without the GIL, on the calling thread
    for small bodies (frames back to back in one block) or on `threads` threads from
    `parallel_min_bytes` of input. Buffers under `threshold` bytes, or whose frame saves less
    than `min_savings` (None: any saving) of them, are stored raw."""
    cdef readonly int codec, level
    cdef int64_t threshold
    cdef double min_savings                 # < 0: no minimum
    cdef int threads
    cdef int64_t parallel_min_bytes

    def __init__(self, int codec, int level, int64_t threshold, object min_savings,
                 bint use_threads, int threads, int64_t parallel_min_bytes):
        self.codec = codec
        self.level = level
        self.threshold = threshold if threshold > 1 else 1
        self.min_savings = -1.0 if min_savings is None else <double>min_savings
        self.threads = threads if use_threads and threads > 1 else 1
        self.parallel_min_bytes = parallel_min_bytes

    cdef list _pack(self, list groups, int64_t alignment):
        """One pack_body call over the buffers of every list in `groups`; a PackedBody each."""
        cdef Py_ssize_t n = 0, i = 0
        cdef list buffers, sources = []
        cdef _PackItems owner
        cdef arrowipc_pack_item* it
        cdef int64_t total = 0, capacity, used = 0, failed = -1
        cdef int status, threads
        cdef const char* error = NULL
        cdef Buffer block = None, src
        cdef uint8_t* dst = NULL
        cdef PackedBody body
        cdef list out = []
        check_alignment(alignment)
        for buffers in groups:
            n += len(buffers)
        owner = _PackItems(n)
        for buffers in groups:
            for b in buffers:
                it = &owner.items[i]
                it.compress = 0
                if b is None:
                    it.src = NULL
                    it.src_len = 0
                else:
                    src = b if type(b) is Buffer else py_buffer(b)
                    b = src
                    it.src = src.ptr
                    it.src_len = src.size
                    if src.size >= self.threshold:
                        it.compress = 1
                        total += src.size
                sources.append(b)
                i += 1
        capacity = pack_capacity(self.codec, owner.items, n, alignment)
        if capacity < 0:
            from arrowipc.ipc.format import CODEC_SPEC_NAMES
            raise ArrowInvalid(f"the {CODEC_SPEC_NAMES.get(self.codec)} library is not available")
        if capacity:
            block = allocate(capacity, False)
            dst = mutable_data(block)
        threads = self.threads if total >= self.parallel_min_bytes else 1
        with nogil:
            status = pack_body(self.codec, self.level, self.min_savings, alignment, owner.items, n,
                               dst, capacity, threads, &used, &failed, &error)
        if status != ARROWIPC_CODEC_OK:
            raise ArrowInvalid(pack_failure(self.codec, status, error, failed))
        i = 0
        for buffers in groups:
            body = PackedBody.__new__(PackedBody)
            body._owner = owner
            body.items = owner.items + i
            body.n = len(buffers)
            body.sources = sources
            body.lo = i
            body.block = block
            body.alignment = alignment
            out.append(body)
            i += body.n
        return out

    def pack(self, list buffers, int64_t alignment=8):
        """The buffers (Buffer, bytes-like, or None for length 0) compressed: a PackedBody whose
        buffers are laid out at `alignment` (a power of two)."""
        return self._pack([buffers], alignment)[0]

    def pack_batches(self, list flats, int64_t alignment=8):
        """The buffers of several FlatBatches compressed in one call: a PackedBody each."""
        cdef FlatBatch fb
        cdef list groups = []
        for fb in flats:
            groups.append(fb.buffers)
        return self._pack(groups, alignment)

    def __call__(self, list buffers):
        """Per buffer: (length prefix, frame) when compressed, (-1 prefix, the buffer) when
        stored raw, None when empty: the form layout_body takes."""
        cdef PackedBody body = self._pack([buffers], 8)[0]
        cdef const arrowipc_pack_item* it
        cdef list out = []
        for i in range(body.n):
            it = &body.items[i]
            if it.len == 0:
                out.append(None)
            elif it.at < 0:
                out.append((_RAW_PREFIX, body.sources[body.lo + i]))
            else:
                out.append((slice_unchecked(body.block, it.at, 8),
                            slice_unchecked(body.block, it.at + 8, it.len - 8)))
        return out


# -- body layout ---------------------------------------------------------------------------------

cdef int64_t _layout_packed(PackedBody body, list parts, int64_t* spans) except -1:
    """Spans and gather parts of a compressed body; returns the body's length. Frames the codec
    wrote back to back (with their padding) are one part."""
    cdef int64_t pos = 0, pad, run_at = -1, run_end = -1, mask = body.alignment - 1
    cdef const arrowipc_pack_item* it
    cdef Py_ssize_t i
    for i in range(body.n):
        it = &body.items[i]
        spans[2 * i] = pos
        spans[2 * i + 1] = it.len
        if it.len == 0:
            continue
        pad = (-it.len) & mask
        if it.at >= 0:
            if it.at != run_end:
                if run_at >= 0:
                    parts.append(slice_unchecked(body.block, run_at, run_end - run_at))
                run_at = it.at
            run_end = it.at + it.len + pad      # the pack wrote this padding
        else:
            if run_at >= 0:
                parts.append(slice_unchecked(body.block, run_at, run_end - run_at))
                run_at = run_end = -1
            parts.append(_RAW_PREFIX)
            parts.append(body.sources[body.lo + i])
            if pad:
                parts.append(_PADDING[pad])
        pos += it.len + pad
    if run_at >= 0:
        parts.append(slice_unchecked(body.block, run_at, run_end - run_at))
    return pos


cdef int64_t _layout_list(list buffers, int64_t alignment, list parts, int64_t* spans) except -1:
    """Spans and gather parts of a body given as a list (layout_body's buffers); returns the
    body's length."""
    cdef int64_t pos = 0, n, pad, mask = alignment - 1
    cdef Py_ssize_t i = 0
    for b in buffers:
        spans[2 * i] = pos
        if b is None:
            n = 0
        elif type(b) is Buffer:
            n = (<Buffer>b).size
            if n:
                parts.append(b)
        elif type(b) is tuple:
            n = 0
            for x in <tuple>b:
                n += len(x)
            parts.extend(<tuple>b)
        else:
            n = len(b)
            if n:
                parts.append(b)
        spans[2 * i + 1] = n
        if n:
            pad = (-n) & mask
            if pad:
                parts.append(_PADDING[pad])
            pos += n + pad
        i += 1
    return pos


cdef bytes encode_batch_message(int header_type, int64_t num_rows, const int64_t* nodes,
                                int64_t n_nodes, const int64_t* spans, int64_t n_bufs,
                                const int64_t* variadic, int64_t n_var, int codec, int version,
                                int64_t body_len, dict custom_metadata, bint legacy,
                                int64_t dict_id=0, bint is_delta=False):
    """Framed Message bytes (prefix, flatbuffer, padding to 8) of a RecordBatch header
    (header_type 3) or of a DictionaryBatch (2) around one, laid out as pyarrow lays it out."""
    cdef int64_t capacity = 512 + 16 * (n_nodes + n_bufs) + 8 * n_var
    cdef int64_t nodes_at, bufs_at, var_at = 0, compression_at = 0, rb_at, header_at, meta_at = 0
    cdef int64_t message_at
    cdef char stack[4096]
    cdef char* buf = stack
    cdef _Rev b
    if custom_metadata:
        for k, v in custom_metadata.items():
            capacity += len(k) + len(v) + 64
    if capacity > <int64_t>sizeof(stack):
        buf = <char*>PyMem_Malloc(capacity)
        if buf == NULL:
            raise MemoryError()
    try:
        rv_init(&b, buf, capacity)
        nodes_at = rv_pairs(&b, nodes, n_nodes)
        bufs_at = rv_pairs(&b, spans, n_bufs)
        if n_var:
            var_at = rv_longs(&b, variadic, n_var)
        if codec >= 0:
            rv_start(&b)
            rv_field_small(&b, 0, codec, 1)        # BodyCompressionMethod.BUFFER is the default
            compression_at = rv_end(&b)
        rv_start(&b)
        rv_field_i64(&b, 0, num_rows)
        rv_field_offset(&b, 4, var_at)
        rv_field_offset(&b, 3, compression_at)
        rv_field_offset(&b, 2, bufs_at)
        rv_field_offset(&b, 1, nodes_at)
        rb_at = header_at = rv_end(&b)
        if header_type == 2:
            rv_start(&b)
            rv_field_i64(&b, 0, dict_id)
            rv_field_offset(&b, 1, rb_at)
            rv_field_small(&b, 2, is_delta, 1)
            header_at = rv_end(&b)
        if custom_metadata:
            meta_at = rv_metadata(&b, custom_metadata)
        rv_start(&b)
        rv_field_i64(&b, 3, body_len)
        rv_field_offset(&b, 4, meta_at)
        rv_field_offset(&b, 2, header_at)
        rv_field_small(&b, 0, version, 2)
        rv_field_small(&b, 1, header_type, 1)
        message_at = rv_end(&b)
        return rv_finish_framed(&b, message_at, legacy)
    finally:
        if buf != stack:
            PyMem_Free(buf)


cdef tuple _encode(int header_type, FlatBatch fb, int64_t num_rows, int alignment, int version,
                   dict custom_metadata, int codec, bint legacy, object compress, object compressed,
                   list spans_out, int64_t dict_id=0, bint is_delta=False):
    cdef Py_ssize_t n_bufs = len(fb.buffers)
    cdef int64_t stack_spans[128]
    cdef int64_t* spans = stack_spans     # (offset, length) per buffer
    check_alignment(alignment)
    if n_bufs > 64:
        spans = <int64_t*>PyMem_Malloc(16 * n_bufs)
        if spans == NULL:
            raise MemoryError()
    try:
        return _encode_into(header_type, fb, num_rows, alignment, version, custom_metadata, codec,
                            legacy, compress, compressed, spans_out, dict_id, is_delta, spans)
    finally:
        if spans != stack_spans:
            PyMem_Free(spans)


cdef tuple _encode_into(int header_type, FlatBatch fb, int64_t num_rows, int alignment,
                        int version, dict custom_metadata, int codec, bint legacy, object compress,
                        object compressed, list spans_out, int64_t dict_id, bint is_delta,
                        int64_t* spans):
    cdef Py_ssize_t n_bufs = len(fb.buffers), i
    cdef list parts = []
    cdef int64_t body_len
    cdef PackedBody packed
    if compressed is None and compress is not None:
        if type(compress) is BodyCompressor:
            compressed = (<BodyCompressor>compress)._pack([fb.buffers], alignment)[0]
        else:
            compressed = compress(fb.buffers)
    if compressed is None:
        body_len = _layout_list(fb.buffers, alignment, parts, spans)
    elif type(compressed) is PackedBody:
        packed = compressed
        if packed.n != n_bufs or packed.alignment != alignment:
            raise ValueError(f"a packed body of {packed.n} buffers at alignment "
                             f"{packed.alignment} for a batch of {n_bufs} at {alignment}")
        body_len = _layout_packed(packed, parts, spans)
    else:
        if len(compressed) != n_bufs:
            raise ValueError(f"{len(compressed)} compressed buffers for a batch of {n_bufs}")
        body_len = _layout_list(compressed, alignment, parts, spans)
    if spans_out is not None:
        for i in range(n_bufs):
            spans_out.append((spans[2 * i], spans[2 * i + 1]))
    return (encode_batch_message(header_type, num_rows, fb._nodes, fb._n_nodes, spans, n_bufs,
                                 fb._variadic, fb._n_variadic, codec, version, body_len,
                                 custom_metadata, legacy, dict_id, is_delta),
            parts, body_len)


def encode_record_batch(list columns, int64_t num_rows, int alignment=64, int version=4,
                        dict custom_metadata=None, int codec=-1, bint legacy=False,
                        object compress=None, FlatBatch flat=None, object compressed=None,
                        list spans_out=None):
    """(framed metadata bytes, body gather parts, body length) for one record batch.

    Builds the header with an exact body layout; `compress`, if given, compresses the body
    buffers before layout (a BodyCompressor, or a callable mapping the list of buffers to their
    compressed forms as layout_body takes them). A caller that flattened and compressed several
    batches at once passes `flat` and `compressed` (a PackedBody, or such a list) instead.
    `spans_out`, if given, receives the header's body buffer spans [(offset, length)] (what a
    reader of the header would find there, without decoding it).
    """
    fb = flat if flat is not None else flatten_columns(columns, num_rows, version)
    return _encode(3, fb, num_rows, alignment, version, custom_metadata, codec, legacy, compress,
                   compressed, spans_out)


def encode_dictionary_batch(int64_t dict_id, ArrayData values, bint is_delta, int alignment=64,
                            int version=4, int codec=-1, bint legacy=False, object compress=None,
                            list spans_out=None, dict custom_metadata=None):
    """(framed metadata bytes, body gather parts, body length) for one dictionary batch;
    `compress`, `spans_out` and `custom_metadata` (the message's) as in encode_record_batch."""
    fb = flatten_columns([values], values.length, version)
    return _encode(2, fb, values.length, alignment, version, custom_metadata, codec, legacy,
                   compress, None, spans_out, dict_id, is_delta)


# -- Schema message and footer around a pre-encoded schema ---------------------------------------

cdef char* _alloc_or_raise(int64_t n) except NULL:
    cdef char* buf = <char*>PyMem_Malloc(n)
    if buf == NULL:
        raise MemoryError()
    return buf


def encode_schema_message(bytes blob, int64_t table_pos, int version=4, bint legacy=False,
                          int blob_alignment=8):
    """Framed Schema message around a pre-encoded Schema table region (whose largest alignment
    is `blob_alignment`)."""
    cdef int64_t capacity = len(blob) + 128, schema_at, message_at
    cdef char* buf = _alloc_or_raise(capacity)
    cdef _Rev b
    try:
        rv_init(&b, buf, capacity)
        schema_at = rv_blob(&b, blob, table_pos, blob_alignment)
        rv_start(&b)
        rv_field_offset(&b, 2, schema_at)
        rv_field_small(&b, 0, version, 2)
        rv_field_small(&b, 1, 1, 1)                     # MessageHeader.Schema
        message_at = rv_end(&b)
        return rv_finish_framed(&b, message_at, legacy)
    finally:
        PyMem_Free(buf)


def encode_footer(bytes blob, int64_t table_pos, list dictionaries, list record_batches,
                  dict metadata=None, int version=4, int blob_alignment=8):
    """Footer flatbuffer (unframed) around a pre-encoded Schema table region (whose largest
    alignment is `blob_alignment`)."""
    cdef int64_t capacity = len(blob) + 256 + 24 * (len(dictionaries) + len(record_batches))
    cdef int64_t schema_at, dicts_at, batches_at, meta_at = 0, footer_at
    cdef char* buf
    cdef _Rev b
    if metadata is not None:
        for k, v in metadata.items():
            capacity += len(k) + len(v) + 64
    buf = _alloc_or_raise(capacity)
    try:
        rv_init(&b, buf, capacity)
        schema_at = rv_blob(&b, blob, table_pos, blob_alignment)
        dicts_at = rv_blocks(&b, dictionaries)
        batches_at = rv_blocks(&b, record_batches)
        if metadata is not None:
            meta_at = rv_metadata(&b, metadata)
        rv_start(&b)
        rv_field_offset(&b, 4, meta_at)
        rv_field_offset(&b, 3, batches_at)
        rv_field_offset(&b, 2, dicts_at)
        rv_field_offset(&b, 1, schema_at)
        rv_field_small(&b, 0, version, 2)
        footer_at = rv_end(&b)
        rv_prealign(&b, 4, b.minalign)
        rv_uoffset(&b, footer_at)
        return PyBytes_FromStringAndSize(b.end - b.size, b.size)
    finally:
        PyMem_Free(buf)
