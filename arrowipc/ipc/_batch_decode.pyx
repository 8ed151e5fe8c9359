# cython: language_level=3
"""RecordBatch header decode and body assembly: metadata + body bytes -> ArrayData, zero-copy.

Every node and buffer the header claims is checked against the body before use; buffers that are
not 8-byte aligned are copied to an aligned allocation (never read misaligned). The result is safe
for every later access: sizes are checked against lengths and types, offsets are validated.
"""
cimport cython
from libc.stdint cimport uint8_t, int32_t, int64_t, uintptr_t
from libc.string cimport memcpy
from libc.stdlib cimport malloc, free

from arrowipc._core.buffer cimport Buffer, allocate, slice_unchecked, mutable_data, py_buffer
from arrowipc._core.arraydata cimport ArrayData, RecordBatchFields, make_array_data, untrack
from arrowipc.ipc._flatbuf cimport FlatTable, rd_i64
from arrowipc.ipc._framing cimport Message, check_block, read_frame

from arrowipc.errors import ArrowInvalid, ArrowNotImplementedError

# Layout kinds (mirror arrowipc.types.Kind)
from arrowipc._core.kinds cimport *

# Slots of RecordBatch in Message.fbs
DEF RB_LENGTH = 0
DEF RB_NODES = 1
DEF RB_BUFFERS = 2
DEF RB_COMPRESSION = 3
DEF RB_VARIADIC = 4

DEF MAX_DEPTH = 64

cdef Buffer ZERO_OFFSETS = py_buffer(bytes(8))   # one 0 offset, 32 or 64 bits wide


@cython.no_gc
cdef class RecordBatchHeader:
    """The decoded RecordBatch table: length, field nodes, buffer locations, compression."""
    cdef readonly int64_t length
    cdef Buffer meta           # the metadata the two vectors below point into (kept alive)
    cdef const uint8_t* nodes  # n_nodes x (int64 length, int64 null_count)
    cdef readonly int64_t n_nodes
    cdef const uint8_t* buffers  # n_buffers x (int64 offset, int64 length)
    cdef readonly int64_t n_buffers
    cdef readonly int codec    # -1: uncompressed, 0: LZ4_FRAME, 1: ZSTD
    cdef readonly list variadic_counts

    cdef inline int64_t node_length(self, int64_t i) noexcept:
        return rd_i64(self.nodes + 16 * i)

    cdef inline int64_t node_nulls(self, int64_t i) noexcept:
        return rd_i64(self.nodes + 16 * i + 8)

    cdef inline int64_t buf_offset(self, int64_t i) noexcept:
        return rd_i64(self.buffers + 16 * i)

    cdef inline int64_t buf_length(self, int64_t i) noexcept:
        return rd_i64(self.buffers + 16 * i + 8)

    def nodes_list(self):
        return [(self.node_length(i), self.node_nulls(i)) for i in range(self.n_nodes)]

    def buffers_list(self):
        return [(self.buf_offset(i), self.buf_length(i)) for i in range(self.n_buffers)]


cpdef RecordBatchHeader decode_record_batch_header(FlatTable rb, int legacy_codec=-1):
    """Decode a RecordBatch table (from a RecordBatch or DictionaryBatch message); `legacy_codec`:
    its message's Message.legacy_codec, the codec when the table names none."""
    cdef RecordBatchHeader h = RecordBatchHeader.__new__(RecordBatchHeader)
    fill_header(h, rb, [], legacy_codec)
    return h


cdef int fill_header(RecordBatchHeader h, FlatTable rb, list no_variadic,
                     int legacy_codec) except -1:
    """Decode RecordBatch table `rb` into `h`; `no_variadic` is the list kept when the table
    lists no variadic buffer counts; `legacy_codec` as decode_record_batch_header takes it."""
    cdef int64_t p, n
    h.length = rb.get_i64(RB_LENGTH, 0)
    if h.length < 0:
        raise ArrowInvalid(f"record batch length is {h.length}, expected >= 0")
    h.meta = rb.buf
    p = rb.vector_at(RB_NODES, 16, &n)
    h.nodes = rb.buf.ptr + (p if p >= 0 else 0)
    h.n_nodes = n
    p = rb.vector_at(RB_BUFFERS, 16, &n)
    h.buffers = rb.buf.ptr + (p if p >= 0 else 0)
    h.n_buffers = n
    h.codec = legacy_codec
    h.variadic_counts = rb.int64s(RB_VARIADIC) if rb.field_pos(RB_VARIADIC) >= 0 else no_variadic
    if rb.field_pos(RB_COMPRESSION) < 0:
        return 0
    comp = rb.table(RB_COMPRESSION, "BodyCompression")
    if comp is not None:
        h.codec = comp.uint8(0, 0)
        if h.codec not in (0, 1):
            raise ArrowInvalid(f"body compression codec must be 0 (LZ4_FRAME) or 1 (ZSTD), got {h.codec}")
        if comp.uint8(1, 0) != 0:
            raise ArrowInvalid(f"body compression method must be 0 (BUFFER), got {comp.uint8(1, 0)}")
    return 0


cdef class _Plan:
    """Per-schema layout, flattened once into C arrays: what assembly needs per node without
    touching Python objects (types are only handed to the ArrayData)."""
    cdef list kinds
    cdef list byte_widths
    cdef list types
    cdef list nchildren
    cdef list list_sizes
    cdef list names             # dotted path of each node, for error messages
    cdef int* c_kinds
    cdef int* c_nchildren
    cdef int64_t* c_widths
    cdef int64_t* c_list_sizes
    cdef Py_ssize_t n

    def __dealloc__(self):
        free(self.c_kinds)
        free(self.c_nchildren)
        free(self.c_widths)
        free(self.c_list_sizes)

    cdef freeze(self):
        cdef Py_ssize_t i, n = len(self.kinds)
        self.n = n
        self.c_kinds = <int*>malloc(sizeof(int) * (n + 1))
        self.c_nchildren = <int*>malloc(sizeof(int) * (n + 1))
        self.c_widths = <int64_t*>malloc(sizeof(int64_t) * (n + 1))
        self.c_list_sizes = <int64_t*>malloc(sizeof(int64_t) * (n + 1))
        if not (self.c_kinds and self.c_nchildren and self.c_widths and self.c_list_sizes):
            raise MemoryError()
        for i in range(n):
            self.c_kinds[i] = self.kinds[i]
            self.c_nchildren[i] = self.nchildren[i]
            self.c_widths[i] = self.byte_widths[i]
            self.c_list_sizes[i] = self.list_sizes[i]


def make_plan(list field_types):
    """Pre-order layout of the given top-level (name, type) pairs (one entry per node)."""
    cdef _Plan p = _Plan.__new__(_Plan)
    p.kinds, p.byte_widths, p.types, p.nchildren, p.list_sizes, p.names = [], [], [], [], [], []

    def add(t, name, depth):
        if depth > MAX_DEPTH:
            raise ArrowInvalid(f"type nesting deeper than {MAX_DEPTH}")
        st = t.storage_type
        kind = st.kind
        p.types.append(t)
        p.names.append(name)
        p.kinds.append(kind)
        if kind == K_DICTIONARY:
            p.byte_widths.append(st.index_type.byte_width)
        else:
            p.byte_widths.append(st.byte_width)
        p.list_sizes.append(getattr(st, "list_size", 0))
        children = [] if kind == K_DICTIONARY else st.fields
        p.nchildren.append(len(children))
        for c in children:
            add(c.type, f"{name}.{c.name}", depth + 1)

    roots = []
    for name, t in field_types:
        roots.append(len(p.kinds))
        add(t, name, 1)
    p.freeze()
    return p, roots


cdef class _Assembler:
    cdef RecordBatchHeader h
    cdef Buffer body
    cdef _Plan plan
    cdef int64_t node_i
    cdef int64_t buf_i
    cdef int64_t var_i
    cdef int64_t plan_i
    cdef list prepared          # decompressed buffers by header index, or None
    cdef list pending           # nodes whose O(n) content checks are deferred: (node, name)
    cdef str where
    cdef int version            # metadata version of the message (V4 unions carry a bitmap)
    cdef int64_t copy_budget    # bytes re-alignment may still copy (overlapping buffers bound)

    cdef int64_t take_span(self, int pi) except -1:
        """Claim the next body buffer: bounds-checked, the re-alignment budget charged when it is
        misaligned; its header index is returned (the caller slices or skips it)."""
        cdef int64_t i = self.buf_i
        cdef int64_t off, n
        if i >= self.h.n_buffers:
            raise ArrowInvalid(f"{self.where}: field {self.plan.names[pi]!r} needs buffer {i} but the header "
                               f"lists {self.h.n_buffers} buffers")
        self.buf_i += 1
        if self.prepared is not None:
            return i
        off = self.h.buf_offset(i)
        n = self.h.buf_length(i)
        if off < 0 or n < 0 or off > self.body.size or n > self.body.size - off:
            raise ArrowInvalid(f"{self.where}: buffer {i} of field {self.plan.names[pi]!r} spans bytes "
                               f"[{off}, {off}+{n}) but the body has {self.body.size} bytes")
        if (<uintptr_t>(self.body.ptr + off)) & 7:
            # Buffers may overlap; without this bound a small body listed many times would make
            # re-alignment copy far more than the input holds.
            if n > self.copy_budget:
                raise ArrowInvalid(f"{self.where}: re-aligning buffer {i} of field "
                                   f"{self.plan.names[pi]!r} would copy more bytes than the "
                                   f"{self.body.size}-byte body holds (overlapping buffers)")
            self.copy_budget -= n
        return i

    cdef Buffer next_buffer(self, int pi):
        """The next body buffer, bounds-checked and 8-byte aligned."""
        cdef int64_t i = self.take_span(pi)
        cdef int64_t off, n
        cdef Buffer copy
        if self.prepared is not None:
            return self.prepared[i]
        off = self.h.buf_offset(i)
        n = self.h.buf_length(i)
        if (<uintptr_t>(self.body.ptr + off)) & 7:
            copy = allocate(n, False)
            memcpy(mutable_data(copy), self.body.ptr + off, n)
            return copy
        return slice_unchecked(self.body, off, n)

    cdef object validity_buffer(self, int pi, int64_t length, int64_t nulls):
        """The next buffer as a validity bitmap: None when the node has no nulls (checked and
        charged like any buffer, but no Buffer object is made for it)."""
        cdef Buffer validity
        if nulls == 0:
            self.take_span(pi)
            return None
        validity = self.next_buffer(pi)
        if validity.size < bitmap_bytes(length):
            raise ArrowInvalid(f"{self.where}: field {self.plan.names[pi]!r} has {nulls} nulls; its validity "
                               f"bitmap needs {bitmap_bytes(length)} bytes but has {validity.size}")
        return validity

    cdef Buffer offsets_buffer(self, int name, int64_t length):
        # Writers before 1.0 sent zero-length arrays with an empty offsets buffer; give them the
        # single 0 offset every consumer expects.
        cdef Buffer offs = self.next_buffer(name)
        if length == 0 and offs.size < 8:
            return ZERO_OFFSETS
        return offs

    cdef int need(self, Buffer b, int64_t count, int64_t width, str what, int name,
                  int64_t extra=0) except -1:
        # O(1) size check: `count` + `extra` entries of `width` bytes (overflow-safe: no sum or
        # product is formed; a node length of 2**63 - 1 plus the one extra offset would wrap)
        if (count > 0 or extra > 0) and (b.size // width) - extra < count:
            raise ArrowInvalid(f"{self.where}: field {self.plan.names[name]!r} needs "
                               f"{(<object>count + extra) * width} bytes of {what}, buffer has {b.size}")
        return 0

    cdef skip(self):
        """Advance past the node at plan_i (and its subtree) without building it."""
        if self.plan_i >= self.plan.n:
            raise ArrowInvalid(f"{self.where}: more field nodes than the schema has")
        cdef int kind = self.plan.c_kinds[self.plan_i]
        cdef int nch = self.plan.c_nchildren[self.plan_i]
        cdef int64_t nbuf = ipc_buffer_count(kind, self.version)
        cdef int64_t nvar
        cdef int pi = self.plan_i
        self.plan_i += 1
        self.node_i += 1
        if kind == K_VIEW:
            if self.var_i >= len(self.h.variadic_counts):
                raise ArrowInvalid(f"{self.where}: a view field needs variadic buffer count "
                                   f"{self.var_i} but the header has {len(self.h.variadic_counts)}")
            nvar = self.h.variadic_counts[self.var_i]
            # the same bound build() applies: a negative or huge count would move buf_i backwards
            # or past every buffer
            if nvar < 0 or nvar > self.h.n_buffers - self.buf_i - nbuf:
                raise ArrowInvalid(f"{self.where}: view field {self.plan.names[pi]!r} claims {nvar} "
                                   f"data buffers but only {self.h.n_buffers - self.buf_i - nbuf} "
                                   f"buffers remain")
            nbuf += nvar
            self.var_i += 1
        self.buf_i += nbuf
        for _ in range(nch):
            self.skip()

    cdef int64_t dry_span(self) noexcept:
        """The size of the next body buffer for the dry pass, or -1 when it is out of bounds or
        misaligned (the eager assembly then decides, and raises or copies)."""
        cdef int64_t i = self.buf_i
        cdef int64_t off, n
        if i >= self.h.n_buffers:
            return -1
        self.buf_i += 1
        off = self.h.buf_offset(i)
        n = self.h.buf_length(i)
        if off < 0 or n < 0 or off > self.body.size or n > self.body.size - off:
            return -1
        if (<uintptr_t>(self.body.ptr + off)) & 7:
            return -1
        return n

    cdef int64_t dry_node(self, int depth) noexcept:
        """The length of the node at plan_i when build() would assemble it (and its subtree)
        without an error and without copying, checked without making an object; -1 when it would
        not, or for a layout the dry pass does not know (build() then decides). The counters
        move exactly as build() moves them."""
        cdef int pi = self.plan_i
        cdef int kind, nch, k
        cdef int64_t width, length, nulls, n, values, child, offset_width
        if pi >= self.plan.n or depth > MAX_DEPTH:
            return -1
        kind = self.plan.c_kinds[pi]
        width = self.plan.c_widths[pi]
        nch = self.plan.c_nchildren[pi]
        self.plan_i += 1
        if self.node_i >= self.h.n_nodes:
            return -1
        length = self.h.node_length(self.node_i)
        nulls = self.h.node_nulls(self.node_i)
        self.node_i += 1
        if length < 0 or nulls < 0 or nulls > length:
            return -1
        if kind == K_NULL:
            return length
        if not (kind == K_FIXED or kind == K_BOOL or kind == K_BINARY or kind == K_LARGE_BINARY
                or kind == K_LIST or kind == K_LARGE_LIST or kind == K_FIXED_SIZE_LIST
                or kind == K_STRUCT):
            return -1
        n = self.dry_span()                     # the validity bitmap
        if n < 0 or (nulls > 0 and n < bitmap_bytes(length)):
            return -1
        if kind == K_BOOL:
            n = self.dry_span()
            return length if n >= 0 and n >= bitmap_bytes(length) else -1
        if kind == K_FIXED:
            n = self.dry_span()
            if n < 0 or (width > 0 and length > n // width):
                return -1
            return length
        if kind == K_STRUCT:
            for k in range(nch):
                child = self.dry_node(depth + 1)
                if child < 0 or child < length:
                    return -1
            return length
        if kind == K_FIXED_SIZE_LIST:
            child = self.dry_node(depth + 1)
            n = self.plan.c_list_sizes[pi]
            if child < 0 or (n > 0 and length > child // n):
                return -1
            return length
        # binary and list layouts: offsets (an empty one stands for the single 0 offset)
        n = self.dry_span()
        if n < 0:
            return -1
        if length == 0 and n < 8:
            n = 8
        offset_width = 4 if kind == K_BINARY or kind == K_LIST else 8
        if (n // offset_width) - 1 < length:
            return -1
        if kind == K_BINARY or kind == K_LARGE_BINARY:
            values = self.dry_span()
            return length if values >= 0 else -1
        child = self.dry_node(depth + 1)
        return length if child >= 0 else -1

    cdef ArrayData build(self, int depth):
        cdef int pi = self.plan_i
        if pi >= self.plan.n:
            raise ArrowInvalid(f"{self.where}: more field nodes than the schema has")
        cdef int kind = self.plan.c_kinds[pi]
        cdef int64_t width = self.plan.c_widths[pi]
        cdef int nch = self.plan.c_nchildren[pi]
        cdef object t = self.plan.types[pi]
        cdef int name = pi              # a plan index: the dotted name is looked up on errors only
        cdef int64_t length, nulls, need, first, last, nvar, k, size
        cdef object validity
        cdef Buffer values, offs
        cdef list bufs, children
        cdef ArrayData child, d
        cdef Buffer type_ids

        if depth > MAX_DEPTH:
            raise ArrowInvalid(f"{self.where}: nesting deeper than {MAX_DEPTH} at field {self.plan.names[name]!r}")
        self.plan_i += 1
        if self.node_i >= self.h.n_nodes:
            raise ArrowInvalid(f"{self.where}: field {self.plan.names[name]!r} needs field node {self.node_i} but "
                               f"the header lists {self.h.n_nodes} nodes")
        length = self.h.node_length(self.node_i)
        nulls = self.h.node_nulls(self.node_i)
        self.node_i += 1
        if length < 0 or nulls < 0 or nulls > length:
            raise ArrowInvalid(f"{self.where}: field {self.plan.names[name]!r} has length {length} and null count "
                               f"{nulls}; expected 0 <= null count <= length")

        if kind == K_NULL:
            return make_array_data(t, length, 0, length, [], [], None)

        if kind == K_REE:
            if nulls:
                raise ArrowInvalid(f"{self.where}: run-end encoded field {self.plan.names[name]!r} has null count "
                                   f"{nulls}, expected 0")
            children = [self.build(depth + 1), self.build(depth + 1)]
            d = make_array_data(t, length, 0, 0, [], children, None)
            self.pending.append((d, name))
            return d

        if kind == K_SPARSE_UNION or kind == K_DENSE_UNION:
            if self.version < 4:
                # V4 unions carry a validity bitmap; V5 removed it. Like Arrow C++, accept it
                # only when it marks nothing null.
                self.next_buffer(name)
                if nulls:
                    raise ArrowInvalid(f"{self.where}: union field {self.plan.names[name]!r} from metadata V4 has "
                                       f"{nulls} top-level nulls, which V5 unions cannot hold")
            type_ids = self.next_buffer(name)
            self.need(type_ids, length, 1, "type ids", name)
            bufs = [type_ids]
            if kind == K_DENSE_UNION:
                offs = self.next_buffer(name)
                self.need(offs, length, 4, "union offsets", name)
                bufs.append(offs)
            children = [self.build(depth + 1) for k in range(nch)]
            d = make_array_data(t, length, 0, 0, bufs, children, None)
            self.pending.append((d, name))
            return d

        # validity bitmap (every remaining layout starts with one); each list below is built at
        # its final size (a batch of small columns makes thousands of them)
        validity = self.validity_buffer(name, length, nulls)

        if kind == K_BOOL:
            values = self.next_buffer(name)
            if values.size < bitmap_bytes(length):
                raise ArrowInvalid(f"{self.where}: bool field {self.plan.names[name]!r} of length {length} needs "
                                   f"{bitmap_bytes(length)} value bytes, buffer has {values.size}")
            return make_array_data(t, length, 0, nulls, [validity, values], [], None)

        if kind == K_FIXED or kind == K_DICTIONARY:
            values = self.next_buffer(name)
            if width > 0 and length > values.size // width:
                raise ArrowInvalid(f"{self.where}: field {self.plan.names[name]!r} of type {t} and length {length} "
                                   f"needs {<object>length * width} bytes, buffer has {values.size}")
            d = make_array_data(t, length, 0, nulls, [validity, values], [], None)
            if kind == K_DICTIONARY:
                self.pending.append((d, name))
            return d

        if kind == K_BINARY or kind == K_LARGE_BINARY:
            offs = self.offsets_buffer(name, length)
            values = self.next_buffer(name)
            self.need(offs, length, 4 if kind == K_BINARY else 8, "offsets", name, 1)
            d = make_array_data(t, length, 0, nulls, [validity, offs, values], [], None)
            self.pending.append((d, name))
            return d

        bufs = [validity]
        if kind == K_VIEW:
            values = self.next_buffer(name)
            self.need(values, length, 16, "views", name)
            bufs.append(values)
            if self.var_i >= len(self.h.variadic_counts):
                raise ArrowInvalid(f"{self.where}: view field {self.plan.names[name]!r} needs variadic buffer count "
                                   f"{self.var_i} but the header has {len(self.h.variadic_counts)}")
            nvar = self.h.variadic_counts[self.var_i]
            self.var_i += 1
            if nvar < 0 or nvar > self.h.n_buffers - self.buf_i:
                raise ArrowInvalid(f"{self.where}: view field {self.plan.names[name]!r} claims {nvar} data buffers "
                                   f"but only {self.h.n_buffers - self.buf_i} buffers remain")
            for k in range(nvar):
                bufs.append(self.next_buffer(name))
            d = make_array_data(t, length, 0, nulls, bufs, [], None)
            self.pending.append((d, name))
            return d

        if kind == K_LIST or kind == K_LARGE_LIST:
            offs = self.offsets_buffer(name, length)
            self.need(offs, length, 4 if kind == K_LIST else 8, "offsets", name, 1)
            bufs.append(offs)
            child = self.build(depth + 1)
            d = make_array_data(t, length, 0, nulls, bufs, [child], None)
            self.pending.append((d, name))
            return d

        if kind == K_LIST_VIEW or kind == K_LARGE_LIST_VIEW:
            width = 4 if kind == K_LIST_VIEW else 8
            offs = self.next_buffer(name)
            values = self.next_buffer(name)
            self.need(offs, length, width, "list view offsets", name)
            self.need(values, length, width, "list view sizes", name)
            bufs.append(offs)
            bufs.append(values)
            child = self.build(depth + 1)
            d = make_array_data(t, length, 0, nulls, bufs, [child], None)
            self.pending.append((d, name))
            return d

        if kind == K_FIXED_SIZE_LIST:
            size = self.plan.c_list_sizes[pi]
            child = self.build(depth + 1)
            if size > 0 and length > child.length // size:
                raise ArrowInvalid(f"{self.where}: fixed size list {self.plan.names[name]!r} of length {length} and "
                                   f"size {size} needs {<object>length * size} child values, has {child.length}")
            return make_array_data(t, length, 0, nulls, bufs, [child], None)

        if kind == K_STRUCT:
            children = []
            for k in range(nch):
                child = self.build(depth + 1)
                if child.length < length:
                    raise ArrowInvalid(f"{self.where}: struct {self.plan.names[name]!r} has length {length} but child "
                                       f"{k} has length {child.length}")
                children.append(child)
            return make_array_data(t, length, 0, nulls, bufs, children, None)

        raise ArrowNotImplementedError(f"{self.where}: field {self.plan.names[name]!r} of type {t} is not supported yet")


cdef inline int64_t bitmap_bytes(int64_t length) noexcept:
    # bytes of a bitmap of `length` >= 0 bits; (length + 7) // 8 wraps for a length near 2**63
    return (length >> 3) + ((length & 7) != 0)


cdef inline int64_t ipc_buffer_count(int kind, int version) noexcept:
    if kind == K_NULL or kind == K_REE:
        return 0
    if kind == K_SPARSE_UNION:
        return 1 if version >= 4 else 2
    if kind == K_DENSE_UNION:
        return 2 if version >= 4 else 3
    if kind == K_FIXED_SIZE_LIST or kind == K_STRUCT:
        return 1
    if kind == K_BINARY or kind == K_LARGE_BINARY or kind == K_LIST_VIEW or kind == K_LARGE_LIST_VIEW:
        return 3
    return 2


cdef int check_header_limits(RecordBatchHeader h, tuple limits, str where) except -1:
    # limits = (max buffers, max variadic buffers), from IpcReadOptions
    cdef int64_t max_buffers = limits[0], max_variadic = limits[1], total = 0
    if h.n_buffers > max_buffers:
        raise ArrowInvalid(f"{where}: the record batch lists {h.n_buffers} buffers, more than the "
                           f"limit of {max_buffers} (IpcReadOptions(max_buffers=...))")
    for c in h.variadic_counts:
        if c > 0:                       # negative counts are rejected where they are used
            if c > max_variadic - total:
                raise ArrowInvalid(f"{where}: the record batch lists more than {max_variadic} "
                                   f"variadic data buffers "
                                   f"(IpcReadOptions(max_variadic_buffers=...))")
            total += c
    return 0


cdef bint dry_assemble(_Assembler a, _Plan plan, list roots, RecordBatchHeader h, Buffer body,
                       list included, str where, int version, tuple limits) except -1:
    """Whether assemble() would succeed on this batch without copying, checked without making
    a Buffer or an ArrayData (every size and bound assemble() checks before data is handed out;
    the O(n) content checks stay pending, as they are for an assembled batch). False also for
    layouts the dry pass leaves to assemble(), which then decides, and raises its own error."""
    cdef Py_ssize_t i, n = len(roots)
    a.h = h
    a.body = body
    a.plan = plan
    a.version = version
    a.where = where
    a.node_i = a.buf_i = a.var_i = a.plan_i = 0
    try:
        if limits is not None:
            check_header_limits(h, limits, where)
        for i in range(n):
            if included is not None and not included[i]:
                a.skip()
            elif a.dry_node(1) != h.length:
                return False
    except ArrowInvalid:
        return False                    # assemble() raises it, with the same message
    finally:
        a.body = None                   # a reused assembler keeps no message's bytes alive
        a.h = None
    return True


@cython.no_gc
@cython.final
cdef class LazyColumns(RecordBatchHeader):
    """A decoded record batch not yet assembled: its header (this object), the body and the
    plan. Every bound and size was checked when it was decoded (dry_assemble); the columns' Buffer
    and ArrayData objects are made by `assemble()`, on the batch's first access to its data."""
    cdef Buffer body
    cdef _Plan plan
    cdef list roots
    cdef list included
    cdef str where
    cdef int version
    cdef bint keep_pending

    def __reduce__(self):
        # a batch not yet assembled pickles (and refuses to) as an assembled one does
        raise TypeError("ArrayData is not picklable; write it with arrowipc.ipc instead")

    def assemble(self):
        """(ArrayData per column, pending content checks or None): what an eager decode of the
        batch would have made."""
        cdef list cols
        assembled = assemble(_Assembler.__new__(_Assembler), self.plan, self.roots, self,
                             self.body, self.included, None, self.where, self.version, None)
        cols = assembled[0]
        if self.included is not None:
            cols = [c for c in cols if c is not None]
            untrack(cols)
        return cols, (assembled[1] if self.keep_pending else None)


def assemble_columns(plan_and_roots, RecordBatchHeader h, Buffer body,
                     list included=None, list prepared=None, str where="record batch",
                     int version=4, tuple limits=None):
    """(ArrayData per top-level field (None where `included` is False), pending checks or None).

    Sizes are checked here; the O(n) offset passes are returned to run before first access.
    `limits` (max buffers, max variadic buffers) bounds what the header may list.
    """
    return assemble(_Assembler.__new__(_Assembler), plan_and_roots[0], plan_and_roots[1], h, body,
                    included, prepared, where, version, limits)


cdef tuple assemble(_Assembler a, _Plan plan, list roots, RecordBatchHeader h, Buffer body,
                    list included, list prepared, str where, int version, tuple limits):
    cdef Py_ssize_t i, n = len(roots)
    cdef list out = [None] * n
    a.h = h
    a.body = body
    a.plan = plan
    a.prepared = prepared
    a.pending = []
    a.where = where
    a.version = version
    a.copy_budget = body.size
    a.node_i = a.buf_i = a.var_i = a.plan_i = 0
    if limits is not None:
        check_header_limits(h, limits, where)
    for i in range(n):
        if included is not None and not included[i]:
            a.skip()
            continue
        col = a.build(1)
        if col.length != h.length:
            # longer is as wrong as shorter: consumers (pyarrow's import among them) require
            # every column of a batch to have exactly its number of rows
            raise ArrowInvalid(f"{where}: column {plan.names[roots[i]]!r} has length {col.length} but the "
                               f"batch has {h.length} rows")
        out[i] = col
    untrack(out)                    # ArrayData and None only
    if not a.pending:
        return out, None
    untrack(a.pending)              # (ArrayData, label) tuples
    pending = (a.pending, plan.names)
    untrack(pending)
    return out, pending


def buffer_needed_mask(plan_and_roots, RecordBatchHeader h, list included, int version=4):
    """Which header buffers belong to included fields (for projection before decompression)."""
    cdef _Plan plan = plan_and_roots[0]
    cdef list roots = plan_and_roots[1]
    cdef _Assembler a = _Assembler.__new__(_Assembler)
    cdef list mask = [False] * h.n_buffers
    cdef int64_t start, j
    a.h = h
    a.plan = plan
    a.version = version
    a.where = "record batch"
    a.node_i = a.buf_i = a.var_i = a.plan_i = 0
    for i in range(len(roots)):
        start = a.buf_i
        a.skip()
        if included is None or included[i]:
            for j in range(start, min(a.buf_i, h.n_buffers)):
                mask[j] = True
    return mask


def fixed_width_values(plan_and_roots, RecordBatchHeader h, Py_ssize_t root, int64_t body_size,
                       int version=4):
    """(offset in the body, values, null count) of top-level field `root`'s values in record
    batch `h`, when the field is one fixed-width node (no children, no dictionary) whose values
    buffer lies in the `body_size`-byte body and holds the batch's `h.length` values; None
    otherwise (an odd or bad header included: decoding the batch reports it). For counts that
    read one column's values where the file holds them, without decoding the batch."""
    cdef _Plan plan = plan_and_roots[0]
    cdef list roots = plan_and_roots[1]
    cdef _Assembler a = _Assembler.__new__(_Assembler)
    cdef int64_t width, off, n, node
    cdef int pi
    if root < 0 or root >= len(roots) or h.codec >= 0:
        return None
    a.h = h
    a.plan = plan
    a.version = version
    a.where = "record batch"
    a.node_i = a.buf_i = a.var_i = a.plan_i = 0
    try:
        for _ in range(root):
            a.skip()
    except ArrowInvalid:
        return None
    pi = roots[root]
    width = plan.c_widths[pi]
    node = a.node_i
    if plan.c_kinds[pi] != K_FIXED or plan.c_nchildren[pi] != 0 or width <= 0 \
            or node >= h.n_nodes or a.buf_i + 1 >= h.n_buffers:
        return None
    n = h.node_length(node)
    if n != h.length or n < 0 or h.node_nulls(node) < 0:
        return None
    off = h.buf_offset(a.buf_i + 1)
    if off < 0 or off > body_size or n > (body_size - off) // width \
            or n > h.buf_length(a.buf_i + 1) // width:
        return None
    return off, n, h.node_nulls(node)


def next_message_fast(Buffer buf, int64_t pos, int64_t end, int64_t max_metadata, plan_and_roots,
                      list included, str where, tuple limits=None):
    """The stream reader's hot step over an in-memory buffer.

    Returns (message or None, next position, columns, pending, num_rows): for an uncompressed
    record batch the columns are assembled here; for anything else columns is None and the
    caller decodes the message itself.
    """
    cdef Message msg
    cdef RecordBatchHeader h
    m, pos = read_frame(buf, pos, end, max_metadata, where, True)
    if m is None:
        return None, pos, None, None, 0
    msg = m
    if msg.header_type != 3:
        return msg, pos, None, None, 0
    h = decode_record_batch_header(msg.header, msg.legacy_codec)
    if h.codec >= 0:
        return msg, pos, None, None, 0
    cols, pending = assemble_columns(plan_and_roots, h, msg.body, included, None, where, msg.version,
                                     limits)
    return msg, pos, cols, pending, h.length


@cython.final
cdef class ReadCounters:
    """The counters a reader keeps up to date; `snapshot` hands out pyarrow's ReadStats.

    Each count is a C increment made with the GIL held, never interrupted by another thread:
    readers that decode on several threads (RecordBatchFileReader.get_batch) need no lock.
    """
    cdef readonly int64_t num_messages
    cdef readonly int64_t num_record_batches
    cdef readonly int64_t num_dictionary_batches
    cdef readonly int64_t num_dictionary_deltas
    cdef readonly int64_t num_replaced_dictionaries

    def count_message(self):
        """One message that is not a record batch (a schema, a dictionary batch)."""
        self.num_messages += 1

    def count_record_batch(self):
        """One record batch message (every read path counts each one, here or in C)."""
        self.num_messages += 1
        self.num_record_batches += 1

    def count_dictionary_batch(self, bint is_delta, bint replaces):
        """One dictionary batch applied: a delta, a replacement, or the first for its id."""
        self.num_dictionary_batches += 1
        self.num_dictionary_deltas += is_delta
        self.num_replaced_dictionaries += replaces

    def snapshot(self):
        """The counters now, as pyarrow's ReadStats."""
        from arrowipc.ipc.options import ReadStats
        return ReadStats(self.num_messages, self.num_record_batches, self.num_dictionary_batches,
                         self.num_dictionary_deltas, self.num_replaced_dictionaries)


cdef list _NO_VARIADIC = []         # never mutated: the reused header's "no variadic counts"


@cython.final
cdef class PlainBatchDecoder:
    """`MessageDecoder.frame_and_decode` for a decoder with nothing to resolve (no dictionaries,
    native byte order) at the structural or none validation level, in one call per message.

    Small batches are dominated by what each message costs in Python objects: this frames the
    message, decodes its header into a reused header, assembles the columns with a reused
    assembler, counts the batch and makes the RecordBatch without a Python-level call.
    """
    cdef _Plan plan
    cdef list roots
    cdef list included
    cdef str where
    cdef tuple limits
    cdef int64_t max_metadata
    cdef object schema
    cdef type batch_type            # RecordBatch: a RecordBatchFields subclass
    cdef bint keep_pending          # structural: the O(n) checks run before first access
    cdef ReadCounters counts        # the decoder's
    cdef RecordBatchHeader header
    cdef _Assembler assembler
    cdef bint busy                  # the reused header and assembler are in use

    def __init__(self, plan_and_roots, list included, str where, tuple limits,
                 int64_t max_metadata, schema, type batch_type, bint keep_pending,
                 ReadCounters counters not None):
        self.plan = plan_and_roots[0]
        self.roots = plan_and_roots[1]
        self.included = included
        self.where = where
        self.limits = limits
        self.max_metadata = max_metadata
        self.schema = schema
        self.batch_type = batch_type
        self.keep_pending = keep_pending
        if not issubclass(batch_type, RecordBatchFields):
            raise TypeError(f"batch_type must derive from RecordBatchFields, got {batch_type!r}")
        self.counts = counters
        self.header = RecordBatchHeader.__new__(RecordBatchHeader)
        self.assembler = _Assembler.__new__(_Assembler)

    def frame_and_decode(self, Buffer buf, int64_t start, int64_t end):
        """(message or None, next position, RecordBatch or None), as
        MessageDecoder.frame_and_decode documents."""
        cdef Message msg
        m, pos = read_frame(buf, start, end, self.max_metadata, self.where, True)
        if m is None:
            return None, pos, None
        msg = m
        if msg.header_type != 3:
            return msg, pos, None
        return msg, pos, self._decode(msg, None)

    def block_batch(self, Buffer buf, list blocks, Py_ssize_t i, int64_t limit):
        """(message, RecordBatch or None) of record batch block `i` of a file held whole in
        `buf`, its footer's `blocks` checked against the data section's end `limit`
        (check_block) and framed and decoded in one call; (None, None) when `i` is out of range
        (the caller raises the error). The batch is None when the message needs the general
        path, as frame_and_decode's is."""
        cdef Py_ssize_t n = len(blocks)
        cdef int64_t off, end
        if i < 0 or i >= n:
            return None, None
        block = check_block(blocks[i], i, "record batch", limit)
        off = block[0]
        end = off + <int64_t>block[1] + <int64_t>block[2]
        m, _ = read_frame(buf, off, end, self.max_metadata, self.where, True)
        if m is None:
            raise ArrowInvalid(f"file: record batch block {i} at byte {off} holds no message")
        msg = m
        if msg.header_type != 3:
            raise ArrowInvalid(f"file: record batch block {i} holds a {msg.type} message")
        return msg, self._decode(msg, None)

    def decode(self, Message msg, RecordBatchHeader header=None):
        """The RecordBatch of record batch message `msg`, its body attached (`header`: its
        decoded header, when the caller has it), or None when it needs the general path (another
        message type, or a compressed body). A reader that gets metadata and bodies apart (the
        Dissociated reader) decodes each batch in this one call."""
        if msg.header_type != 3:
            return None
        return self._decode(msg, header)

    cdef object _decode(self, Message msg, RecordBatchHeader given):
        cdef RecordBatchHeader h
        cdef _Assembler a
        cdef bint reused = not self.busy
        cdef tuple assembled
        cdef LazyColumns lazy
        cdef bint ok
        if given is None:
            lazy = LazyColumns.__new__(LazyColumns)
            fill_header(lazy, msg.header, _NO_VARIADIC, msg.legacy_codec)
            if lazy.codec >= 0:
                return None
            if reused:
                self.busy = True
                a = self.assembler
            else:
                a = _Assembler.__new__(_Assembler)
            try:
                ok = dry_assemble(a, self.plan, self.roots, lazy, msg.body, self.included,
                                  self.where, msg.version, self.limits)
            finally:
                if reused:
                    self.busy = False
            if ok:
                lazy.body = msg.body
                lazy.plan = self.plan
                lazy.roots = self.roots
                lazy.included = self.included
                lazy.where = self.where
                lazy.version = msg.version
                lazy.keep_pending = self.keep_pending
                self._count()
                return self._batch(None, None, lazy, lazy.length)
            given = lazy                # assembled now: it copies, or raises its error
            reused = not self.busy
        if reused:
            # Python code can run inside (a collection's finalizers, an error's formatting) and
            # let another thread in: it then makes its own.
            h, a = self.header, self.assembler
            self.busy = True
        else:
            h, a = RecordBatchHeader.__new__(RecordBatchHeader), _Assembler.__new__(_Assembler)
        try:
            if given is None:
                fill_header(h, msg.header, _NO_VARIADIC, msg.legacy_codec)
            else:
                h = given
            if h.codec >= 0:
                return None
            assembled = assemble(a, self.plan, self.roots, h, msg.body, self.included, None,
                                 self.where, msg.version, self.limits)
        finally:
            # the reused objects must not keep the last message's bytes alive
            if given is None:
                h.meta = None
            a.body = None
            a.h = None
            a.pending = None
            if reused:
                self.busy = False
        self._count()
        cols = assembled[0]
        if self.included is not None:
            cols = [c for c in cols if c is not None]
            untrack(cols)
        return self._batch(cols, assembled[1] if self.keep_pending else None, None, h.length)

    cdef inline void _count(self) noexcept:
        self.counts.num_messages += 1
        self.counts.num_record_batches += 1

    cdef object _batch(self, list cols, object pending, LazyColumns lazy, int64_t num_rows):
        cdef RecordBatchFields batch = RecordBatchFields.__new__(self.batch_type)
        # RecordBatch.__init__'s work, without a Python frame per batch: C field stores
        batch.schema = self.schema
        batch._cols = cols
        batch.num_rows = num_rows
        batch._pending = pending
        batch._lazy = lazy
        batch._where = "record batch"
        untrack(batch)
        return batch
