# cython: language_level=3
"""RecordBatch encoding: ArrayData -> field nodes, body buffers and the header flatbuffer.

The writer flattens a batch in pre-order, truncates sliced buffers (offsets rebased to 0, bitmaps
shifted to bit 0), lays buffers out at the requested alignment and encodes the Message flatbuffer
front to back without a general-purpose builder. The body is returned as a gather list: nothing is
copied here except what slicing forces.
"""
from libc.stdint cimport uint8_t, uint16_t, int16_t, uint32_t, int32_t, int64_t
from libc.string cimport memcmp, memcpy, memset
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING

from arrowipc._core.buffer cimport Buffer, allocate, mutable_data, py_buffer, slice_unchecked
from arrowipc._core.arraydata cimport ArrayData, make_array_data

from arrowipc._core.bitmap import bitmap_view, count_set_bits
from arrowipc._core.offsets import rebase_offsets, read_offset_pair
from arrowipc.errors import ArrowInvalid, ArrowNotImplementedError
from arrowipc.types import ExtensionType

from arrowipc._core.kinds cimport *

# Padding chunks, so gather lists never allocate for padding.
PADDING = tuple(bytes(i) for i in range(64))
cdef bytes _EMPTY = b""


cdef class FlatBatch:
    """A batch flattened for IPC: nodes, buffers (None = length 0) and variadic counts."""
    cdef public list nodes        # [(length, null_count), ...]
    cdef public list buffers      # [Buffer or None, ...]
    cdef public list variadic_counts
    cdef public int version       # metadata version being written (V4 unions differ)

    def __init__(self, int version=4):
        self.nodes = []
        self.buffers = []
        self.variadic_counts = []
        self.version = version


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


cdef flatten_node(FlatBatch fb, ArrayData d, int64_t offset, int64_t length, int depth):
    """Append the node for d's slots [offset, offset + length) and its buffers, then children's."""
    cdef object t = storage_of(d.type)
    cdef int kind = t.kind
    cdef int64_t nulls, width, first, last, size
    cdef Buffer values
    cdef ArrayData child
    if depth > 64:
        raise ArrowInvalid("cannot write arrays nested more than 64 deep")
    nulls = node_null_count(d, offset, length)
    fb.nodes.append((length, nulls))
    if kind == K_NULL:
        return
    if kind == K_SPARSE_UNION or kind == K_DENSE_UNION:
        fb.nodes[len(fb.nodes) - 1] = (length, 0)
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
        fb.nodes[len(fb.nodes) - 1] = (length, 0)
        ends_data, values_data = ree_physical_slice(d, offset, length)
        flatten_node(fb, ends_data, ends_data.offset, ends_data.length, depth + 1)
        flatten_node(fb, values_data, values_data.offset, values_data.length, depth + 1)
        return

    # validity: omitted (length 0) when there are no nulls
    if nulls == 0 or d.buffers[0] is None:
        fb.buffers.append(None)
    else:
        fb.buffers.append(bitmap_view(d.buffers[0], offset, length))

    if kind == K_BOOL:
        fb.buffers.append(bitmap_view(d.buffers[1], offset, length))
        return
    if kind == K_FIXED or kind == K_DICTIONARY:
        width = t.index_type.byte_width if kind == K_DICTIONARY else t.byte_width
        values = d.buffers[1]
        if values is None or (length and (offset > values.size // max(width, 1) or
                                          length > values.size // max(width, 1) - offset)):
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
        offs, first, last = rebase_offsets(d.buffers[1], offset, length, width)
        fb.buffers.append(offs)
        data = d.buffers[2]
        fb.buffers.append(data.slice(first, last - first) if data is not None else None)
        return
    if kind == K_LIST or kind == K_LARGE_LIST:
        width = 4 if kind == K_LIST else 8
        offs, first, last = rebase_offsets(d.buffers[1], offset, length, width)
        fb.buffers.append(offs)
        child = d.children[0]
        flatten_node(fb, child, child.offset + first, last - first, depth + 1)
        return
    if kind == K_VIEW:
        fb.buffers.append(d.buffers[1].slice(offset * 16, length * 16))
        fb.buffers.extend(d.buffers[2:])   # variadic data buffers, referenced by the views as-is
        fb.variadic_counts.append(len(d.buffers) - 2)
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


cdef int64_t* _pairs_of(list items, int64_t* out) except NULL:
    cdef int64_t i = 0
    for a, c in items:
        out[i] = a
        out[i + 1] = c
        i += 2
    return out


cdef bytes encode_batch_message(int header_type, int64_t num_rows, list nodes, list spans,
                                list variadic_counts, int codec, int version, int64_t body_len,
                                dict custom_metadata, bint legacy, int64_t dict_id=0,
                                bint is_delta=False):
    """Framed Message bytes (prefix, flatbuffer, padding to 8) of a RecordBatch header
    (header_type 3) or of a DictionaryBatch (2) around one, laid out as pyarrow lays it out."""
    cdef int64_t n_nodes = len(nodes), n_bufs = len(spans), n_var = len(variadic_counts)
    cdef int64_t n_pairs = n_nodes if n_nodes > n_bufs else n_bufs
    cdef int64_t capacity = 512 + 16 * (n_nodes + n_bufs) + 8 * n_var, i
    cdef int64_t nodes_at, bufs_at, var_at = 0, compression_at = 0, rb_at, header_at, meta_at = 0
    cdef int64_t message_at
    cdef int64_t* scratch
    cdef char* buf
    cdef _Rev b
    if custom_metadata:
        for k, v in custom_metadata.items():
            capacity += len(k) + len(v) + 64
    scratch = <int64_t*>PyMem_Malloc(8 * (2 * n_pairs + n_var + 1))
    buf = <char*>PyMem_Malloc(capacity)
    if scratch == NULL or buf == NULL:
        PyMem_Free(scratch)
        PyMem_Free(buf)
        raise MemoryError()
    try:
        rv_init(&b, buf, capacity)
        nodes_at = rv_pairs(&b, _pairs_of(nodes, scratch), n_nodes)
        bufs_at = rv_pairs(&b, _pairs_of(spans, scratch), n_bufs)
        if n_var:
            for i in range(n_var):
                scratch[i] = variadic_counts[i]
            var_at = rv_longs(&b, scratch, n_var)
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
        PyMem_Free(scratch)
        PyMem_Free(buf)


def encode_record_batch(list columns, int64_t num_rows, int alignment=64, int version=4,
                        dict custom_metadata=None, int codec=-1, bint legacy=False,
                        object compress=None, FlatBatch flat=None, list compressed=None,
                        list spans_out=None):
    """(framed metadata bytes, body gather parts, body length) for one record batch.

    Builds the header with an exact body layout; `compress`, if given, maps the list of body
    buffers to their compressed forms before layout. A caller that flattened and compressed
    several batches at once passes `flat` and `compressed` instead. `spans_out`, if given,
    receives the header's body buffer spans [(offset, length)] (what a reader of the header
    would find there, without decoding it).
    """
    fb = flat if flat is not None else flatten_columns(columns, num_rows, version)
    if compressed is not None:
        buffers = compressed
    else:
        buffers = fb.buffers if compress is None else compress(fb.buffers)
    spans, parts, body_len = layout_body(buffers, alignment)
    if spans_out is not None:
        spans_out.extend(spans)
    return (encode_batch_message(3, num_rows, fb.nodes, spans, fb.variadic_counts, codec, version,
                                 body_len, custom_metadata, legacy), parts, body_len)


def encode_dictionary_batch(int64_t dict_id, ArrayData values, bint is_delta, int alignment=64,
                            int version=4, int codec=-1, bint legacy=False, object compress=None,
                            list spans_out=None):
    """(framed metadata bytes, body gather parts, body length) for one dictionary batch;
    `spans_out` as in encode_record_batch."""
    fb = flatten_columns([values], values.length, version)
    buffers = fb.buffers if compress is None else compress(fb.buffers)
    spans, parts, body_len = layout_body(buffers, alignment)
    if spans_out is not None:
        spans_out.extend(spans)
    return (encode_batch_message(2, values.length, fb.nodes, spans, fb.variadic_counts, codec,
                                 version, body_len, None, legacy, dict_id, is_delta),
            parts, body_len)


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
