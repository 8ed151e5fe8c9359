# cython: language_level=3
"""Verified flatbuffer reading.

Every offset read from the input is checked against the buffer before it is followed, so a corrupt
or hostile message raises ArrowInvalid instead of reading out of bounds. Slot numbers are the
field indices of format/*.fbs (a union field takes two slots: its type, then its value).

A table made by `recording(t)` notes in its Extent the span of bytes that every read through it,
and through the tables reached from it, touches: vtables, inline parts, vectors and strings. All
offsets in a flatbuffer are relative, so a decode of the same bytes at the same distances from
another table gives the same result: ExtentCache finds such a decode again without redoing it
(a file's footer schema, whose blocks and metadata change from file to file while the schema's
bytes do not).
"""
cimport cython
from libc.stdint cimport uint8_t, uint16_t, int16_t, uint32_t, int32_t, int64_t
from libc.string cimport memcmp, memcpy

from arrowipc._core.buffer cimport Buffer, py_buffer, slice_unchecked
from arrowipc.errors import ArrowInvalid


@cython.no_gc
cdef class FlatTable:
    """A flatbuffer table at `pos` inside `buf`, with its vtable located and checked."""

    def __repr__(self):
        return f"<FlatTable {self.what} at {self.pos}>"

    cdef inline int64_t field_pos(self, int slot):
        """Absolute position of the field in `slot`, or -1 when absent."""
        cdef int64_t entry = 4 + 2 * <int64_t>slot
        if entry + 2 > self.vt_size:
            return -1
        cdef uint16_t off = rd_u16(self.buf.ptr + self.vt_pos + entry)
        if off == 0:
            return -1
        return self.pos + off

    cdef int64_t scalar_pos(self, int slot, int width) except -2:
        cdef int64_t p = self.field_pos(slot)
        if p < 0:
            return -1
        if p - self.pos + width > self.inline_size:
            raise ArrowInvalid(f"flatbuffer {self.what}: field {slot} ({width} bytes at byte {p}) "
                               f"extends past the table's {self.inline_size} inline bytes")
        return p

    cdef int64_t get_i64(self, int slot, int64_t default) except? -0x7fffffffffffffff:
        cdef int64_t p = self.scalar_pos(slot, 8)
        return default if p < 0 else rd_i64(self.buf.ptr + p)

    cdef int32_t get_i32(self, int slot, int32_t default) except? -0x7fffffff:
        cdef int64_t p = self.scalar_pos(slot, 4)
        return default if p < 0 else rd_i32(self.buf.ptr + p)

    cdef int16_t get_i16(self, int slot, int16_t default) except? -0x7fff:
        cdef int64_t p = self.scalar_pos(slot, 2)
        return default if p < 0 else <int16_t>rd_u16(self.buf.ptr + p)

    cdef int get_u8(self, int slot, int default) except -1:
        cdef int64_t p = self.scalar_pos(slot, 1)
        return default if p < 0 else self.buf.ptr[p]

    cdef int64_t deref(self, int slot) except -2:
        """Follow the uoffset in `slot`; the target position, or -1 when absent."""
        cdef int64_t p = self.scalar_pos(slot, 4)
        if p < 0:
            return -1
        cdef int64_t target = p + <int64_t>rd_u32(self.buf.ptr + p)
        if target > self.buf.size - 4:
            raise ArrowInvalid(f"flatbuffer {self.what}: field {slot} points to byte {target}, "
                               f"beyond the {self.buf.size}-byte metadata")
        return target

    cdef int64_t vector_at(self, int slot, int64_t elem_size, int64_t* count) except -2:
        """Position of the first element of the vector in `slot` (count written), -1 if absent."""
        cdef int64_t p = self.deref(slot)
        if p < 0:
            count[0] = 0
            return -1
        if p % 4:
            # a flatbuffer verifier's rule (pyarrow's refuses such metadata): read unaligned,
            # the count and elements are other bytes than the writer's
            raise ArrowInvalid(f"flatbuffer {self.what}: vector in field {slot} at byte {p} is not "
                               f"aligned to 4 bytes")
        cdef int64_t n = rd_u32(self.buf.ptr + p)
        if elem_size > 0 and n > (self.buf.size - p - 4) // elem_size:
            raise ArrowInvalid(f"flatbuffer {self.what}: vector in field {slot} claims {n} elements "
                               f"of {elem_size} bytes at byte {p}, past the end of the "
                               f"{self.buf.size}-byte metadata")
        count[0] = n
        if self.extent is not None:
            self.extent.add(p, p + 4 + (n * elem_size if elem_size > 0 else 0))
        return p + 4

    # -- Python-facing accessors (schema and footer decoding) ----------------------------------
    @property
    def recorded_span(self):
        """(first byte, end) of the bytes read through a recording() table and the tables
        reached from it so far; None for a table that does not record."""
        if self.extent is None:
            return None
        return self.extent.lo, self.extent.hi

    def has(self, int slot):
        return self.field_pos(slot) >= 0

    def int64(self, int slot, int64_t default=0):
        return self.get_i64(slot, default)

    def int32(self, int slot, int32_t default=0):
        return self.get_i32(slot, default)

    def int16(self, int slot, int16_t default=0):
        return self.get_i16(slot, default)

    def uint8(self, int slot, int default=0):
        return self.get_u8(slot, default)

    def boolean(self, int slot, bint default=False):
        return self.get_u8(slot, default) != 0

    def table(self, int slot, str what="table"):
        cdef int64_t p = self.deref(slot)
        if p < 0:
            return None
        return table_at(self.buf, p, what, self.depth + 1, self.extent)

    def string(self, int slot):
        """The string in `slot` decoded as UTF-8 (None when absent)."""
        b = self.bytes_field(slot)
        if b is None:
            return None
        try:
            return b.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ArrowInvalid(f"flatbuffer {self.what}: string field {slot} is not UTF-8: {e}") from None

    def bytes_field(self, int slot):
        cdef int64_t n
        cdef int64_t p = self.vector_at(slot, 1, &n)
        if p < 0:
            return None
        return (<const char*>self.buf.ptr + p)[:n]

    def vector_length(self, int slot):
        cdef int64_t n
        self.vector_at(slot, 0, &n)
        return n

    def tables(self, int slot, str what="table"):
        """The vector of tables in `slot` as a list of FlatTable (empty when absent)."""
        cdef int64_t n, i, p, q
        p = self.vector_at(slot, 4, &n)
        out = []
        for i in range(n):
            q = p + 4 * i
            out.append(table_at(self.buf, q + <int64_t>rd_u32(self.buf.ptr + q), what,
                                self.depth + 1, self.extent))
        return out

    def int64s(self, int slot):
        cdef int64_t n, i
        cdef int64_t p = self.vector_at(slot, 8, &n)
        return [rd_i64(self.buf.ptr + p + 8 * i) for i in range(n)]

    def int32s(self, int slot):
        cdef int64_t n, i
        cdef int64_t p = self.vector_at(slot, 4, &n)
        return [rd_i32(self.buf.ptr + p + 4 * i) for i in range(n)]

    def int16s(self, int slot):
        cdef int64_t n, i
        cdef int64_t p = self.vector_at(slot, 2, &n)
        return [<int16_t>rd_u16(self.buf.ptr + p + 2 * i) for i in range(n)]

    def struct_int64s(self, int slot, int count):
        """The `count` int64 members of the inline struct in `slot` (e.g. Buffer: offset,
        length), or None when the field is absent; bounds-checked like every read."""
        cdef int64_t p = self.scalar_pos(slot, 8 * count)
        if p < 0:
            return None
        return [rd_i64(self.buf.ptr + p + 8 * i) for i in range(count)]

    def structs(self, int slot, int64_t struct_size):
        """(Buffer over the raw struct array, count) for a vector of fixed-size structs."""
        cdef int64_t n
        cdef int64_t p = self.vector_at(slot, struct_size, &n)
        if p < 0:
            return py_buffer(b""), 0
        return slice_unchecked(self.buf, p, n * struct_size), n


cdef FlatTable table_at(Buffer buf, int64_t pos, str what, int depth, Extent extent=None):
    """Locate and check the table at `pos`: its vtable and inline size must lie inside `buf`."""
    if depth > 128:
        raise ArrowInvalid(f"flatbuffer {what}: tables nested more than 128 deep")
    if pos < 0 or pos > buf.size - 4:
        raise ArrowInvalid(f"flatbuffer {what}: table at byte {pos} outside the {buf.size}-byte metadata")
    if pos % 4:
        raise ArrowInvalid(f"flatbuffer {what}: table at byte {pos} is not aligned to 4 bytes")
    cdef int64_t vt = pos - <int64_t>rd_i32(buf.ptr + pos)
    if vt < 0 or vt > buf.size - 4:
        raise ArrowInvalid(f"flatbuffer {what}: vtable of the table at byte {pos} is at byte {vt}, "
                           f"outside the {buf.size}-byte metadata")
    cdef int64_t vt_size = rd_u16(buf.ptr + vt)
    cdef int64_t inline_size = rd_u16(buf.ptr + vt + 2)
    if vt_size < 4 or vt_size % 2 or vt_size > buf.size - vt:
        raise ArrowInvalid(f"flatbuffer {what}: vtable at byte {vt} has invalid size {vt_size}")
    if inline_size < 4 or inline_size > buf.size - pos:
        raise ArrowInvalid(f"flatbuffer {what}: table at byte {pos} claims {inline_size} inline "
                           f"bytes but the metadata has {buf.size - pos} left")
    cdef FlatTable t = FlatTable.__new__(FlatTable)
    t.buf = buf
    t.pos = pos
    t.vt_pos = vt
    t.vt_size = vt_size
    t.inline_size = inline_size
    t.depth = depth
    t.what = what
    if extent is not None:
        extent.add(vt, vt + vt_size)
        extent.add(pos, pos + inline_size)
        t.extent = extent
    return t


cpdef FlatTable root_table(object data, str what="Message"):
    """The root table of a flatbuffer held in `data` (any buffer; zero-copy)."""
    cdef Buffer buf = py_buffer(data)
    if buf.size < 8:
        raise ArrowInvalid(f"flatbuffer {what}: expected at least 8 bytes, got {buf.size}")
    return table_at(buf, rd_u32(buf.ptr), what, 0)


cpdef FlatTable recording(FlatTable t):
    """Table `t` again, recording in its extent the bytes read through it and every table reached
    from it (see the module docstring)."""
    cdef Extent extent = Extent.__new__(Extent)
    extent.lo = extent.hi = t.pos
    return table_at(t.buf, t.pos, t.what, t.depth, extent)


@cython.final
cdef class _Cached:
    cdef int64_t lo, hi        # the recorded span, relative to the table's position
    cdef int depth
    cdef bytes key              # the span's bytes
    cdef object tag
    cdef object value


@cython.final
cdef class ExtentCache:
    """Values computed from flatbuffer tables through recording() copies, found again for a table
    of any buffer whose bytes at the same distances equal the recorded span (and with the same
    `tag` and nesting depth): the computation read nothing else, so it would give the same value.
    Holds at most `capacity` values, the newest first."""
    cdef list _entries
    cdef Py_ssize_t capacity

    def __init__(self, Py_ssize_t capacity):
        self._entries = []
        self.capacity = capacity

    def get(self, FlatTable table, object tag):
        """The value kept for a table whose span equals `table`'s bytes, or None."""
        cdef _Cached c
        cdef int64_t a, b
        cdef list entries = self._entries           # replaced, never changed, by put()
        for entry in entries:
            c = <_Cached>entry
            a = table.pos + c.lo
            b = table.pos + c.hi
            if a < 0 or b > table.buf.size or c.depth != table.depth or not (c.tag == tag):
                continue
            if memcmp(table.buf.ptr + a, <const char*>c.key, b - a) == 0:
                return c.value
        return None

    def put(self, FlatTable recorded, object tag, object value):
        """Keep `value`, computed through `recorded` (a recording() table), under its span."""
        cdef Extent extent = recorded.extent
        if extent is None:
            raise ValueError("put() takes a table made by recording()")
        cdef _Cached c = _Cached.__new__(_Cached)
        c.lo = extent.lo - recorded.pos
        c.hi = extent.hi - recorded.pos
        c.depth = recorded.depth
        c.key = (<const char*>recorded.buf.ptr + extent.lo)[:extent.hi - extent.lo]
        c.tag = tag
        c.value = value
        self._entries = [c] + self._entries[:self.capacity - 1]

    def clear(self):
        self._entries = []

    def __len__(self):
        return len(self._entries)
