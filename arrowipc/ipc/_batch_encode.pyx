# cython: language_level=3
"""RecordBatch encoding: ArrayData -> field nodes, body buffers and the header flatbuffer.

The writer flattens a batch in pre-order, truncates sliced buffers (offsets rebased to 0, bitmaps
shifted to bit 0), lays buffers out at the requested alignment and encodes the Message flatbuffer
front to back without a general-purpose builder. The body is returned as a gather list: nothing is
copied here except what slicing forces.
"""
from libc.stdint cimport uint8_t, uint16_t, int16_t, uint32_t, int32_t, int64_t
from libc.string cimport memcpy, memset
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


# -- front-to-back flatbuffer encoding ---------------------------------------------------------

cdef class _Out:
    cdef bytearray data

    cdef inline int64_t pos(self):
        return len(self.data)

    cdef inline void pad_to(self, int64_t align, int64_t phase=0):
        cdef int64_t p = len(self.data)
        cdef int64_t n = (align - ((p - phase) % align)) % align
        if n:
            self.data += PADDING[n]

    cdef inline void u8(self, int v):
        self.data.append(v & 0xFF)

    cdef inline void i16(self, int16_t v):
        self.data += (<char*>&v)[:2]

    cdef inline void i32(self, int32_t v):
        self.data += (<char*>&v)[:4]

    cdef inline void i64(self, int64_t v):
        self.data += (<char*>&v)[:8]

    cdef inline void patch_u32(self, int64_t at, uint32_t v):
        cdef char* p = <char*>self.data
        memcpy(p + at, &v, 4)


cdef int64_t write_table(_Out o, list slots, list sizes, list values):
    """Write vtable then table inline data; fields are laid out in the order given, each aligned to
    its size. slots/sizes/values are parallel; value None marks an offset field to patch later.
    Returns the table position; field positions are stored back into `values` as ('at', pos)."""
    cdef int nslots = (max(slots) + 1) if slots else 0
    cdef int64_t vt_pos, tbl_pos, p
    cdef list field_off = [0] * nslots
    cdef int i
    # inline layout: soffset (4) then fields sorted by decreasing size for natural alignment
    order = sorted(range(len(slots)), key=lambda k: -sizes[k])
    layout = []
    p = 4
    for i in order:
        sz = sizes[i]
        p = (p + sz - 1) // sz * sz
        layout.append((i, p))
        field_off[slots[i]] = p
        p += sz
    inline_size = (p + 3) // 4 * 4
    o.pad_to(2)
    vt_pos = o.pos()
    o.i16(4 + 2 * nslots)
    o.i16(inline_size)
    for i in range(nslots):
        o.i16(field_off[i])
    o.pad_to(8)
    tbl_pos = o.pos()
    o.i32(<int32_t>(tbl_pos - vt_pos))
    positions = {}
    cur = 4
    for i, at in layout:
        if at > cur:
            o.data += PADDING[at - cur]
        v = values[i]
        sz = sizes[i]
        positions[i] = tbl_pos + at
        if v is None:
            o.i32(0)   # uoffset, patched when the target is written
        elif sz == 8:
            o.i64(v)
        elif sz == 4:
            o.i32(v)
        elif sz == 2:
            o.i16(v)
        else:
            o.u8(v)
        cur = at + sz
    if inline_size > cur:
        o.data += PADDING[inline_size - cur]
    for i in range(len(values)):
        if values[i] is None:
            values[i] = ("at", positions[i])
    return tbl_pos


cdef inline void link(_Out o, object field_ref, int64_t target):
    cdef int64_t at = field_ref[1]
    o.patch_u32(at, <uint32_t>(target - at))


cdef int64_t write_struct_vector(_Out o, list pairs):
    """A vector of 16-byte structs (two int64 each); returns the vector position."""
    o.pad_to(8, 4)
    cdef int64_t vpos = o.pos()
    o.i32(<int32_t>len(pairs))
    for a, b in pairs:
        o.i64(a)
        o.i64(b)
    return vpos


cdef int64_t write_string(_Out o, bytes s):
    o.pad_to(4)
    cdef int64_t pos = o.pos()
    o.i32(<int32_t>len(s))
    o.data += s
    o.u8(0)
    return pos


cdef int64_t write_metadata_vector(_Out o, dict metadata):
    """[KeyValue] vector; returns its position."""
    cdef list keys = list(metadata.keys())
    cdef int64_t n = len(keys)
    o.pad_to(4)
    cdef int64_t vpos = o.pos()
    o.i32(<int32_t>n)
    cdef int64_t slots_at = o.pos()
    for _ in range(n):
        o.i32(0)
    for i, k in enumerate(keys):
        vals = [None, None]
        tpos = write_table(o, [0, 1], [4, 4], vals)
        o.patch_u32(slots_at + 4 * i, <uint32_t>(tpos - (slots_at + 4 * i)))
        link(o, vals[0], write_string(o, bytes(k)))
        link(o, vals[1], write_string(o, bytes(metadata[k])))
    return vpos


cdef int64_t write_record_batch_table(_Out o, int64_t length, list nodes, list buffer_spans,
                                      int codec, list variadic_counts):
    slots, sizes, vals = [0, 1, 2], [8, 4, 4], [length, None, None]
    if codec >= 0:
        slots.append(3); sizes.append(4); vals.append(None)
    if variadic_counts:
        slots.append(4); sizes.append(4); vals.append(None)
    rb = write_table(o, slots, sizes, vals)
    link(o, vals[1], write_struct_vector(o, nodes))
    link(o, vals[2], write_struct_vector(o, buffer_spans))
    k = 3
    if codec >= 0:
        cvals = [codec, 0]
        link(o, vals[k], write_table(o, [0, 1], [1, 1], cvals))
        k += 1
    if variadic_counts:
        o.pad_to(8, 4)
        vpos = o.pos()
        o.i32(<int32_t>len(variadic_counts))
        for c in variadic_counts:
            o.i64(c)
        link(o, vals[k], vpos)
    return rb


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


def encode_message(int header_type, int version, int64_t body_length, header_writer,
                   dict custom_metadata=None, bint legacy=False):
    """Framed message bytes: continuation, int32 length, flatbuffer padded to 8."""
    cdef _Out o = _Out.__new__(_Out)
    o.data = bytearray(8)       # framing prefix, filled in last
    o.i32(0)                    # root offset (relative to byte 8), patched below
    slots, sizes, vals = [0, 1, 2, 3], [2, 1, 4, 8], [version, header_type, None, body_length]
    if custom_metadata:
        slots.append(4); sizes.append(4); vals.append(None)
    msg = write_table(o, slots, sizes, vals)
    o.patch_u32(8, <uint32_t>(msg - 8))
    link(o, vals[2], header_writer(o))
    if custom_metadata:
        link(o, vals[4], write_metadata_vector(o, custom_metadata))
    prefix_len = 4 if legacy else 8
    o.pad_to(8)
    cdef bytearray data = o.data
    meta_len = len(data) - 8
    if legacy:
        # legacy framing has a 4-byte prefix: keep the total a multiple of 8
        del data[:4]
        meta_len = len(data) - 4
        if (meta_len + 4) % 8:
            data += PADDING[8 - (meta_len + 4) % 8]
            meta_len = len(data) - 4
        data[0:4] = (<int32_t>meta_len).to_bytes(4, "little", signed=True)
    else:
        data[0:4] = b"\xff\xff\xff\xff"
        data[4:8] = (<int32_t>meta_len).to_bytes(4, "little", signed=True)
    return bytes(data)


cdef inline void put_i16(char* p, int64_t at, int16_t v) noexcept:
    memcpy(p + at, &v, 2)


cdef inline void put_i32(char* p, int64_t at, int32_t v) noexcept:
    memcpy(p + at, &v, 4)


cdef inline void put_i64(char* p, int64_t at, int64_t v) noexcept:
    memcpy(p + at, &v, 8)


cdef bytes encode_plain_record_batch(int64_t num_rows, list nodes, list spans, int version,
                                     int64_t body_len, int codec, list variadic_counts):
    """Framed Message(RecordBatch) bytes with a fixed layout (no custom metadata, modern framing).

    Layout, relative to the flatbuffer start (byte 8 of the output):
      0 root offset | 4 Message vtable | 24 Message table | 48 RecordBatch vtable |
      64 RecordBatch table | 96 BodyCompression (optional) | vectors: nodes, buffers, variadic
    Every int64 lands on an 8-byte boundary of the flatbuffer: strict verifiers (flatcc, Rust)
    check alignment.
    """
    cdef int64_t n_nodes = len(nodes), n_bufs = len(spans), n_var = len(variadic_counts)
    cdef int64_t pos = 96 + (16 if codec >= 0 else 0)     # 8-aligned
    # each vector: 4 bytes of padding, the uint32 length, then 8-aligned int64 elements
    cdef int64_t nodes_at = pos + 8
    cdef int64_t bufs_at = nodes_at + 16 * n_nodes + 8
    cdef int64_t var_at = bufs_at + 16 * n_bufs + 8
    cdef int64_t end = (var_at + 8 * n_var) if n_var else (bufs_at + 16 * n_bufs)
    cdef int64_t meta_len = (end + 7) // 8 * 8
    cdef bytes out = PyBytes_FromStringAndSize(NULL, 8 + meta_len)
    cdef char* o = PyBytes_AS_STRING(out)
    cdef char* f = o + 8
    cdef int64_t i, a, b
    memset(o, 0, 8 + meta_len)
    put_i32(o, 0, -1)
    put_i32(o, 4, <int32_t>meta_len)
    put_i32(f, 0, 24)                                      # root: Message table
    # Message vtable (5 slots) and table
    put_i16(f, 4, 14); put_i16(f, 6, 24)
    put_i16(f, 8, 16); put_i16(f, 10, 18); put_i16(f, 12, 4); put_i16(f, 14, 8); put_i16(f, 16, 0)
    put_i32(f, 24, 20)                                     # soffset to vtable at 4
    put_i32(f, 28, 64 - 28)                                # header -> RecordBatch table
    put_i64(f, 32, body_len)
    put_i16(f, 40, <int16_t>version)
    f[42] = 3                                              # MessageHeader.RecordBatch
    # RecordBatch vtable (5 slots) and table
    put_i16(f, 48, 14); put_i16(f, 50, 32)
    put_i16(f, 52, 8); put_i16(f, 54, 4); put_i16(f, 56, 16)
    put_i16(f, 58, 20 if codec >= 0 else 0); put_i16(f, 60, 24 if n_var else 0)
    put_i32(f, 64, 16)                                     # soffset to vtable at 48
    put_i32(f, 68, <int32_t>(nodes_at - 4 - 68))
    put_i64(f, 72, num_rows)
    put_i32(f, 80, <int32_t>(bufs_at - 4 - 80))
    if codec >= 0:
        put_i32(f, 84, 104 - 84)
        put_i16(f, 96, 8); put_i16(f, 98, 8); put_i16(f, 100, 4); put_i16(f, 102, 5)
        put_i32(f, 104, 8)                                 # soffset to vtable at 96
        f[108] = <char>codec
        f[109] = 0                                         # BodyCompressionMethod.BUFFER
    if n_var:
        put_i32(f, 88, <int32_t>(var_at - 4 - 88))
    put_i32(f, nodes_at - 4, <int32_t>n_nodes)
    for i in range(n_nodes):
        a, b = nodes[i]
        put_i64(f, nodes_at + 16 * i, a)
        put_i64(f, nodes_at + 16 * i + 8, b)
    put_i32(f, bufs_at - 4, <int32_t>n_bufs)
    for i in range(n_bufs):
        a, b = spans[i]
        put_i64(f, bufs_at + 16 * i, a)
        put_i64(f, bufs_at + 16 * i + 8, b)
    if n_var:
        put_i32(f, var_at - 4, <int32_t>n_var)
        for i in range(n_var):
            put_i64(f, var_at + 8 * i, variadic_counts[i])
    return out


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
    if not custom_metadata and not legacy:
        return (encode_plain_record_batch(num_rows, fb.nodes, spans, version, body_len, codec,
                                          fb.variadic_counts), parts, body_len)

    def header(_Out o):
        return write_record_batch_table(o, num_rows, fb.nodes, spans, codec, fb.variadic_counts)

    meta = encode_message(3, version, body_len, header, custom_metadata, legacy)
    return meta, parts, body_len


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

    def header(_Out o):
        slots, sizes, vals = [0, 1, 2], [8, 4, 1], [dict_id, None, 1 if is_delta else 0]
        t = write_table(o, slots, sizes, vals)
        link(o, vals[1], write_record_batch_table(o, values.length, fb.nodes, spans, codec,
                                                  fb.variadic_counts))
        return t

    meta = encode_message(2, version, body_len, header, None, legacy)
    return meta, parts, body_len


# -- Schema message and footer around a pre-encoded schema ---------------------------------------

cdef int64_t embed_blob(_Out o, bytes blob, int64_t table_pos, int64_t fb_start):
    """Place a self-contained flatbuffer region (encoded back to front, so aligned relative to
    its end) with its end 8-aligned relative to the flatbuffer start; returns the position of
    the table it holds. Every offset inside the region is relative, so it is copied verbatim."""
    cdef int64_t n = len(blob)
    cdef int64_t pad = (8 - (o.pos() - fb_start + n) % 8) % 8
    if pad:
        o.data += PADDING[pad]
    cdef int64_t start = o.pos()
    o.data += blob
    return start + table_pos


def encode_schema_message(bytes blob, int64_t table_pos, int version=4, bint legacy=False):
    """Framed Schema message around a pre-encoded Schema table region."""
    def header(_Out o):
        return embed_blob(o, blob, table_pos, 8)
    return encode_message(1, version, 0, header, None, legacy)


cdef int64_t write_block_vector(_Out o, list blocks):
    """[Block]: (int64 offset, int32 metadata length, 4 bytes padding, int64 body length)."""
    o.pad_to(8, 4)
    cdef int64_t vpos = o.pos()
    o.i32(<int32_t>len(blocks))
    for off, meta_len, body_len in blocks:
        o.i64(off)
        o.i32(meta_len)
        o.i32(0)
        o.i64(body_len)
    return vpos


def encode_footer(bytes blob, int64_t table_pos, list dictionaries, list record_batches,
                  dict metadata=None, int version=4):
    """Footer flatbuffer (unframed) around a pre-encoded Schema table region."""
    cdef _Out o = _Out.__new__(_Out)
    o.data = bytearray()
    o.i32(0)                                 # root offset, patched below
    slots, sizes, vals = [0, 1, 2, 3], [2, 4, 4, 4], [version, None, None, None]
    if metadata is not None:
        slots.append(4); sizes.append(4); vals.append(None)
    footer = write_table(o, slots, sizes, vals)
    o.patch_u32(0, <uint32_t>footer)
    link(o, vals[2], write_block_vector(o, dictionaries))
    link(o, vals[3], write_block_vector(o, record_batches))
    if metadata is not None:
        link(o, vals[4], write_metadata_vector(o, metadata))
    link(o, vals[1], embed_blob(o, blob, table_pos, 0))
    o.pad_to(8)
    return bytes(o.data)
