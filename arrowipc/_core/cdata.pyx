# cython: language_level=3
"""The Arrow C data interface and C stream interface, both directions, zero-copy.

This is the C side only: structs, strings, release callbacks, buffers and ownership. A schema
crosses it as a SchemaNode, a plain description of one ArrowSchema (format string, name,
metadata, flags, children, dictionary); what a format string means as a DataType is the model's
business (arrowipc/data/cschema.py), so this module imports nothing above the physical layer. Arrays
are read and written against their DataType's layout attributes only (`storage_type`, `kind`,
`fields`, widths), as the rest of _core does.

Export: an ArrowSchema is built from a SchemaNode (strings and child structs in one malloc'ed
private block, released without the GIL); an ArrowArray points straight at our Buffers and its
private data holds a strong reference to the ArrayData, so every Buffer's owner lives until the
consumer calls release. An ArrowArrayStream pulls ArrayData from a Python iterator.

Import: the producer's ArrowArray is moved into a heap struct owned by an `_ImportedArray`; every
Buffer wraps a producer pointer with that owner as its base, so the producer's release runs when the
last Buffer (of any node, child or dictionary) is gone. The C interface carries no buffer sizes:
they are computed from type, length and offset (and the last offset, or the variadic sizes buffer).
"""
cimport cython
from cpython.pycapsule cimport PyCapsule_New, PyCapsule_IsValid, PyCapsule_GetPointer
from cpython.ref cimport PyObject, Py_INCREF, Py_DECREF
from libc.stdint cimport uint8_t, int32_t, int64_t, INT64_MAX
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memcpy, memset
from libc.errno cimport EINVAL, EIO, ENOMEM, ENOSYS

from arrowipc._core.buffer cimport Buffer, wrap_pointer, allocate, mutable_data
from arrowipc._core.arraydata cimport ArrayData, make_array_data

import sys

from arrowipc.errors import ArrowInvalid, ArrowNotImplementedError, ArrowTypeError

from arrowipc._core.kinds cimport *

# Nesting deeper than this in a foreign schema or array is refused (it would exhaust the C stack).
cdef enum:
    MAX_DEPTH = 200

# Schemas are released without the GIL (possibly from a consumer's thread): count them atomically.
cdef extern from *:
    """
    static int64_t arrowipc_cdata_live_schemas = 0;
    static inline void arrowipc_cdata_schemas_add(int64_t d) {
        __atomic_add_fetch(&arrowipc_cdata_live_schemas, d, __ATOMIC_RELAXED);
    }
    static inline int64_t arrowipc_cdata_schemas_get(void) {
        return __atomic_load_n(&arrowipc_cdata_live_schemas, __ATOMIC_RELAXED);
    }
    """
    void arrowipc_cdata_schemas_add(int64_t d) noexcept nogil
    int64_t arrowipc_cdata_schemas_get() noexcept nogil

# Exported ArrowArray nodes and streams whose release has not run yet (released with the GIL).
cdef int64_t _live_exports = 0
# Imported arrays and streams whose owner has not been collected yet.
cdef int64_t _live_imports = 0


def live_exports():
    """Exported ArrowArray nodes and ArrowArrayStreams not yet released by their consumer."""
    return _live_exports


def live_schema_exports():
    """Exported ArrowSchema nodes not yet released by their consumer."""
    return arrowipc_cdata_schemas_get()


def live_imports():
    """Imported arrays and streams whose producer has not been asked to release them yet."""
    return _live_imports


# ================================================================================================
# Schema export
# ================================================================================================

ctypedef struct SchemaPrivate:
    char* format
    char* name
    char* metadata
    ArrowSchema** child_ptrs
    ArrowSchema* children          # n_children structs, owned here even if a consumer moves one
    ArrowSchema* dictionary


cdef void _release_schema(ArrowSchema* schema) noexcept nogil:
    cdef SchemaPrivate* p = <SchemaPrivate*>schema.private_data
    cdef int64_t i
    if p != NULL:
        if p.children != NULL:
            for i in range(schema.n_children):
                if p.children[i].release != NULL:   # NULL: moved out by the consumer
                    p.children[i].release(&p.children[i])
        if p.dictionary != NULL:
            if p.dictionary.release != NULL:
                p.dictionary.release(p.dictionary)
            free(p.dictionary)
        free(p.children)
        free(p.child_ptrs)
        free(p.format)
        free(p.name)
        free(p.metadata)
        free(p)
    schema.private_data = NULL
    schema.release = NULL
    arrowipc_cdata_schemas_add(-1)


cdef char* _dup_bytes(bytes b) except NULL:
    """A malloc'ed NUL-terminated copy of b."""
    cdef Py_ssize_t n = len(b)
    cdef char* out = <char*>malloc(n + 1)
    if out == NULL:
        raise MemoryError()
    if n:
        memcpy(out, <const char*>b, n)
    out[n] = 0
    return out


# The flag bits of ArrowSchema.flags, for the model to set and read.
FLAG_DICTIONARY_ORDERED = ARROW_FLAG_DICTIONARY_ORDERED
FLAG_NULLABLE = ARROW_FLAG_NULLABLE
FLAG_MAP_KEYS_SORTED = ARROW_FLAG_MAP_KEYS_SORTED

@cython.final
cdef class SchemaNode:
    """One ArrowSchema described in Python, without a type class: what an export builds the
    struct from and what an import reads out of it.

    format: the format string; name; metadata: a bytes -> bytes mapping or None; flags: the
    FLAG_* bits; children: a tuple of SchemaNode; dictionary: the SchemaNode of a
    dictionary-encoded node's values, else None. What the format means is the model's business
    (arrowipc/data/cschema.py).
    """
    cdef readonly str format
    cdef readonly str name
    cdef readonly object metadata
    cdef readonly int64_t flags
    cdef readonly tuple children
    cdef readonly SchemaNode dictionary

    def __init__(self, str format not None, str name not None, metadata, int64_t flags,
                 tuple children not None, SchemaNode dictionary=None):
        self.format = format
        self.name = name
        self.metadata = metadata
        self.flags = flags
        self.children = children
        self.dictionary = dictionary

    cdef tuple _fields(self):
        return (self.format, self.name, self.metadata, self.flags, self.children,
                self.dictionary)

    def __eq__(self, other):
        if not isinstance(other, SchemaNode):
            return NotImplemented
        return self._fields() == (<SchemaNode>other)._fields()

    def __ne__(self, other):
        if not isinstance(other, SchemaNode):
            return NotImplemented
        return self._fields() != (<SchemaNode>other)._fields()

    __hash__ = None       # metadata may be a dict

    def __repr__(self):
        return ("SchemaNode(format={!r}, name={!r}, metadata={!r}, flags={!r}, children={!r}, "
                "dictionary={!r})").format(*self._fields())


def encode_metadata(metadata):
    """Metadata in the C data interface layout: int32 count, then (int32 len, bytes) pairs."""
    if not metadata:
        return None
    order = sys.byteorder
    parts = [len(metadata).to_bytes(4, order, signed=True)]
    for k, v in metadata.items():
        k = k.encode() if isinstance(k, str) else bytes(k)
        v = v.encode() if isinstance(v, str) else bytes(v)
        parts += [len(k).to_bytes(4, order, signed=True), k,
                  len(v).to_bytes(4, order, signed=True), v]
    return b"".join(parts)


cdef int export_schema_into(object node_object, ArrowSchema* out) except -1:
    cdef SchemaPrivate* p = <SchemaPrivate*>calloc(1, sizeof(SchemaPrivate))
    cdef SchemaNode node
    cdef int64_t i, n
    if p == NULL:
        raise MemoryError()
    # From here on `out` is a valid schema: on failure its own release frees what was built.
    out.format = NULL
    out.name = NULL
    out.metadata = NULL
    out.flags = 0
    out.n_children = 0
    out.children = NULL
    out.dictionary = NULL
    out.private_data = p
    out.release = _release_schema
    arrowipc_cdata_schemas_add(1)
    try:
        if not isinstance(node_object, SchemaNode):
            raise ArrowTypeError(f"expected a SchemaNode to export, got "
                                 f"{node_object.__class__.__name__}")
        node = <SchemaNode>node_object
        p.format = _dup_bytes(node.format.encode())
        out.format = p.format
        p.name = _dup_bytes(node.name.encode())
        out.name = p.name
        encoded = encode_metadata(node.metadata)
        if encoded is not None:
            p.metadata = _dup_bytes(encoded)
            out.metadata = p.metadata
        out.flags = node.flags
        if node.dictionary is not None:
            p.dictionary = <ArrowSchema*>calloc(1, sizeof(ArrowSchema))
            if p.dictionary == NULL:
                raise MemoryError()
            out.dictionary = p.dictionary
            export_schema_into(node.dictionary, p.dictionary)
        children = node.children
        n = len(children)
        if n:
            p.children = <ArrowSchema*>calloc(n, sizeof(ArrowSchema))
            p.child_ptrs = <ArrowSchema**>calloc(n, sizeof(ArrowSchema*))
            if p.children == NULL or p.child_ptrs == NULL:
                raise MemoryError()
            out.n_children = n
            out.children = p.child_ptrs
            for i in range(n):
                p.child_ptrs[i] = &p.children[i]
                export_schema_into(children[i], &p.children[i])
    except BaseException:
        _release_schema(out)
        raise
    return 0


cdef void _schema_capsule_destructor(object capsule) noexcept:
    if not PyCapsule_IsValid(capsule, b"arrow_schema"):
        return
    cdef ArrowSchema* s = <ArrowSchema*>PyCapsule_GetPointer(capsule, b"arrow_schema")
    if s.release != NULL:
        s.release(s)
    free(s)


cdef object _new_schema_capsule(ArrowSchema** out):
    """A capsule owning a zeroed heap ArrowSchema (released and freed by the capsule)."""
    cdef ArrowSchema* s = <ArrowSchema*>calloc(1, sizeof(ArrowSchema))
    if s == NULL:
        raise MemoryError()
    try:
        capsule = PyCapsule_New(s, b"arrow_schema", _schema_capsule_destructor)
    except BaseException:
        free(s)
        raise
    out[0] = s
    return capsule


def export_schema_capsule(node):
    """A PyCapsule "arrow_schema" holding the ArrowSchema `node` (a SchemaNode) describes."""
    cdef ArrowSchema* s = NULL
    capsule = _new_schema_capsule(&s)
    export_schema_into(node, s)
    return capsule


# ================================================================================================
# Array export
# ================================================================================================

ctypedef struct ArrayPrivate:
    PyObject* owner               # strong reference: the ArrayData (plus extra buffers we made)
    const void** buffers
    ArrowArray** child_ptrs
    ArrowArray* children          # n_children structs, owned here even if a consumer moves one
    ArrowArray* dictionary


cdef void _release_array(ArrowArray* array) noexcept with gil:
    global _live_exports
    cdef ArrayPrivate* p = <ArrayPrivate*>array.private_data
    cdef int64_t i
    if p != NULL:
        if p.children != NULL:
            for i in range(array.n_children):
                if p.children[i].release != NULL:   # NULL: moved out by the consumer
                    p.children[i].release(&p.children[i])
        if p.dictionary != NULL:
            if p.dictionary.release != NULL:
                p.dictionary.release(p.dictionary)
            free(p.dictionary)
        free(p.children)
        free(p.child_ptrs)
        free(p.buffers)
        if p.owner != NULL:
            Py_DECREF(<object>p.owner)
        free(p)
    array.private_data = NULL
    array.release = NULL
    _live_exports -= 1


# Buffers per layout in the C data interface (views: at least 2, plus data buffers and sizes).
_C_BUFFER_COUNT = {
    K_NULL: 0, K_BOOL: 2, K_FIXED: 2, K_BINARY: 3, K_LARGE_BINARY: 3, K_VIEW: 2,
    K_LIST: 2, K_LARGE_LIST: 2, K_LIST_VIEW: 3, K_LARGE_LIST_VIEW: 3, K_FIXED_SIZE_LIST: 1,
    K_STRUCT: 1, K_SPARSE_UNION: 1, K_DENSE_UNION: 2, K_REE: 0, K_DICTIONARY: 2,
}


cdef inline bint _has_validity(int kind) noexcept:
    return not (kind == K_NULL or kind == K_SPARSE_UNION or kind == K_DENSE_UNION or kind == K_REE)


cdef Buffer _variadic_sizes(list data_buffers):
    """The int64 buffer of variadic data buffer sizes that view arrays export last."""
    cdef Py_ssize_t i, n = len(data_buffers)
    cdef Buffer out = allocate(8 * n, False)
    cdef int64_t* sizes = <int64_t*>mutable_data(out) if n else NULL
    cdef Buffer b
    for i in range(n):
        b = data_buffers[i]
        sizes[i] = b.size
    return out


cdef str _where(object t):
    # Only on error: a nested type's str() costs more than exporting the array itself.
    return f"exporting an array of type {t}"


cdef int export_array_into(ArrayData data, ArrowArray* out) except -1:
    global _live_exports
    cdef ArrayPrivate* p = <ArrayPrivate*>calloc(1, sizeof(ArrayPrivate))
    cdef int64_t i, n_buffers, n_children
    cdef int kind
    cdef Buffer b
    cdef object owner
    if p == NULL:
        raise MemoryError()
    out.length = 0
    out.null_count = 0
    out.offset = 0
    out.n_buffers = 0
    out.n_children = 0
    out.buffers = NULL
    out.children = NULL
    out.dictionary = NULL
    out.private_data = p
    out.release = _release_array
    _live_exports += 1
    try:
        t = data.type
        storage = t.storage_type
        kind = storage.kind
        bufs = data.buffers
        expected = _C_BUFFER_COUNT[kind]
        if kind == K_NULL:
            bufs = []        # the null layout has no buffers whatever the producer attached
        elif kind == K_VIEW:
            if len(bufs) < 2:
                raise ArrowInvalid(f"{_where(t)}: expected at least 2 buffers, found {len(bufs)}")
        elif len(bufs) != expected:
            raise ArrowInvalid(f"{_where(t)}: expected {expected} buffers, found {len(bufs)}")
        for i in range(len(bufs)):
            bo = bufs[i]
            if bo is None and i == 0 and _has_validity(kind):
                continue
            if not isinstance(bo, Buffer):
                raise ArrowInvalid(f"{_where(t)}: buffer {i} must be a Buffer, found "
                                   f"{bo.__class__.__name__}")
        owner = data
        if kind == K_VIEW:
            sizes = _variadic_sizes(bufs[2:])
            owner = (data, sizes)
            bufs = list(bufs) + [sizes]
        Py_INCREF(owner)
        p.owner = <PyObject*>owner

        n_buffers = len(bufs)
        p.buffers = <const void**>calloc(n_buffers if n_buffers else 1, sizeof(void*))
        if p.buffers == NULL:
            raise MemoryError()
        for i in range(n_buffers):
            bo = bufs[i]
            if bo is not None:
                b = <Buffer>bo
                p.buffers[i] = <const void*>b.ptr
        out.n_buffers = n_buffers
        out.buffers = p.buffers

        children = data.children
        n_children = len(children)
        expected = storage.num_fields
        if kind == K_DICTIONARY:
            expected = 0
        if n_children != expected:
            raise ArrowInvalid(f"{_where(t)}: expected {expected} children, found {n_children}")
        if n_children:
            p.children = <ArrowArray*>calloc(n_children, sizeof(ArrowArray))
            p.child_ptrs = <ArrowArray**>calloc(n_children, sizeof(ArrowArray*))
            if p.children == NULL or p.child_ptrs == NULL:
                raise MemoryError()
            out.n_children = n_children
            out.children = p.child_ptrs
            for i in range(n_children):
                p.child_ptrs[i] = &p.children[i]
                export_array_into(children[i], &p.children[i])
        if kind == K_DICTIONARY:
            if not isinstance(data.dictionary, ArrayData):
                raise ArrowInvalid(f"{_where(t)}: a dictionary array needs its dictionary values")
            p.dictionary = <ArrowArray*>calloc(1, sizeof(ArrowArray))
            if p.dictionary == NULL:
                raise MemoryError()
            out.dictionary = p.dictionary
            export_array_into(data.dictionary, p.dictionary)

        out.length = data.length
        out.offset = data.offset
        out.null_count = data.null_count
        if data.null_count < 0:
            # Known without scanning for layouts that have no validity bitmap.
            if kind == K_NULL:
                out.null_count = data.length
            elif not _has_validity(kind) or bufs[0] is None:
                out.null_count = 0
    except BaseException:
        _release_array(out)
        raise
    return 0


cdef void _array_capsule_destructor(object capsule) noexcept:
    if not PyCapsule_IsValid(capsule, b"arrow_array"):
        return
    cdef ArrowArray* a = <ArrowArray*>PyCapsule_GetPointer(capsule, b"arrow_array")
    if a.release != NULL:
        a.release(a)
    free(a)


def export_array_capsule(ArrayData data):
    """A PyCapsule "arrow_array" viewing `data` zero-copy (it keeps `data` alive until released)."""
    cdef ArrowArray* a = <ArrowArray*>calloc(1, sizeof(ArrowArray))
    if a == NULL:
        raise MemoryError()
    try:
        capsule = PyCapsule_New(a, b"arrow_array", _array_capsule_destructor)
    except BaseException:
        free(a)
        raise
    export_array_into(data, a)
    return capsule


# ================================================================================================
# Stream export
# ================================================================================================

cdef class _StreamExport:
    """What an exported ArrowArrayStream reads from: a schema and an iterator of ArrayData."""
    cdef object schema           # the SchemaNode every get_schema exports
    cdef object iterator
    cdef bytes last_error
    cdef int error_code


cdef int _stream_fail(_StreamExport state, BaseException exc) noexcept:
    """Remember `exc` for get_last_error and return the errno-style code for it."""
    state.last_error = f"{exc.__class__.__name__}: {exc}".encode("utf-8", "replace")
    if isinstance(exc, MemoryError):
        state.error_code = ENOMEM
    elif isinstance(exc, (ValueError, TypeError)):
        state.error_code = EINVAL
    else:
        state.error_code = EIO
    return state.error_code


cdef int _stream_get_schema(ArrowArrayStream* stream, ArrowSchema* out) noexcept with gil:
    cdef _StreamExport state
    if stream.release == NULL or stream.private_data == NULL:
        return EINVAL
    state = <_StreamExport>stream.private_data
    try:
        export_schema_into(state.schema, out)
    except BaseException as exc:
        return _stream_fail(state, exc)
    return 0


cdef int _stream_get_next(ArrowArrayStream* stream, ArrowArray* out) noexcept with gil:
    cdef _StreamExport state
    if stream.release == NULL or stream.private_data == NULL:
        return EINVAL
    state = <_StreamExport>stream.private_data
    if state.error_code:
        return state.error_code      # a failed stream stays failed
    if state.iterator is None:
        out.release = NULL
        return 0
    try:
        data = next(state.iterator)
    except StopIteration:
        state.iterator = None        # drop the source as soon as it is exhausted
        out.release = NULL
        return 0
    except BaseException as exc:
        return _stream_fail(state, exc)
    try:
        if not isinstance(data, ArrayData):
            raise ArrowTypeError(f"stream source yielded {data.__class__.__name__}, "
                                 "expected ArrayData")
        export_array_into(<ArrayData>data, out)
    except BaseException as exc:
        return _stream_fail(state, exc)
    return 0


cdef const char* _stream_get_last_error(ArrowArrayStream* stream) noexcept with gil:
    cdef _StreamExport state
    if stream.release == NULL or stream.private_data == NULL:
        return NULL
    state = <_StreamExport>stream.private_data
    if state.last_error is None:
        return NULL
    return <const char*>state.last_error


cdef void _stream_release(ArrowArrayStream* stream) noexcept with gil:
    global _live_exports
    if stream.private_data != NULL:
        Py_DECREF(<object>stream.private_data)
        stream.private_data = NULL
    stream.release = NULL
    _live_exports -= 1


cdef void _stream_capsule_destructor(object capsule) noexcept:
    if not PyCapsule_IsValid(capsule, b"arrow_array_stream"):
        return
    cdef ArrowArrayStream* s = <ArrowArrayStream*>PyCapsule_GetPointer(capsule,
                                                                       b"arrow_array_stream")
    if s.release != NULL:
        s.release(s)
    free(s)


def export_stream_capsule(schema, iterator):
    """A PyCapsule "arrow_array_stream" over `iterator`, yielding ArrayData of the type the
    SchemaNode `schema` describes."""
    global _live_exports
    if not isinstance(schema, SchemaNode):
        raise ArrowTypeError(f"expected a SchemaNode for the stream, got "
                             f"{schema.__class__.__name__}")
    cdef _StreamExport state = _StreamExport.__new__(_StreamExport)
    state.schema = schema
    state.iterator = iter(iterator)
    cdef ArrowArrayStream* s = <ArrowArrayStream*>calloc(1, sizeof(ArrowArrayStream))
    if s == NULL:
        raise MemoryError()
    try:
        capsule = PyCapsule_New(s, b"arrow_array_stream", _stream_capsule_destructor)
    except BaseException:
        free(s)
        raise
    Py_INCREF(state)
    s.private_data = <void*>state
    s.get_schema = _stream_get_schema
    s.get_next = _stream_get_next
    s.get_last_error = _stream_get_last_error
    s.release = _stream_release
    _live_exports += 1
    return capsule


# ================================================================================================
# Schema import
# ================================================================================================

cdef object _decode_metadata(const char* md, str where):
    """The metadata dict (bytes -> bytes) of a C schema, or None when absent or empty."""
    cdef int32_t count, klen, vlen, i
    cdef const char* pos = md
    if md == NULL:
        return None
    memcpy(&count, pos, 4)
    pos += 4
    if count < 0:
        raise ArrowInvalid(f"{where}: metadata claims {count} entries, expected >= 0")
    out = {}
    for i in range(count):
        memcpy(&klen, pos, 4)
        pos += 4
        if klen < 0:
            raise ArrowInvalid(f"{where}: metadata key {i} has length {klen}, expected >= 0")
        key = pos[:klen]
        pos += klen
        memcpy(&vlen, pos, 4)
        pos += 4
        if vlen < 0:
            raise ArrowInvalid(f"{where}: metadata value {i} has length {vlen}, expected >= 0")
        out[key] = pos[:vlen]
        pos += vlen
    return out or None


cdef object _import_schema_node(const ArrowSchema* s, int depth, str path):
    """The SchemaNode of `s` and its descendants, checked as C structures (pointers, nesting,
    strings, metadata layout); what the format strings mean is for the model to check."""
    cdef int64_t i
    if depth > MAX_DEPTH:
        raise ArrowInvalid(f"{path}: schema nesting deeper than {MAX_DEPTH} levels")
    if s == NULL:
        raise ArrowInvalid(f"{path}: NULL schema pointer")
    if s.release == NULL:
        raise ArrowInvalid(f"{path}: the schema has already been released")
    if s.format == NULL:
        raise ArrowInvalid(f"{path}: schema has no format string")
    name = s.name.decode("utf-8", "replace") if s.name != NULL else ""
    where = f"{path}: field {name!r}"
    try:
        fmt = s.format.decode("utf-8")
    except UnicodeDecodeError:
        raise ArrowInvalid(f"{where}: format string {s.format[:40]!r} is not UTF-8") from None
    metadata = _decode_metadata(s.metadata, where)
    if s.n_children < 0 or (s.n_children > 0 and s.children == NULL):
        raise ArrowInvalid(f"{where}: format {fmt!r} has n_children={s.n_children} and "
                           f"children={'NULL' if s.children == NULL else 'set'}")
    children = tuple([_import_schema_node(s.children[i], depth + 1, f"{path}.{i}")
                      for i in range(s.n_children)])
    dictionary = None
    if s.dictionary != NULL:
        dictionary = _import_schema_node(s.dictionary, depth + 1, f"{path}.dictionary")
    return SchemaNode(fmt, name, metadata, s.flags, children, dictionary)


cdef object import_schema_struct(const ArrowSchema* schema):
    return _import_schema_node(schema, 0, "C schema")


cdef void* _capsule_pointer(object capsule, const char* name) except NULL:
    if not PyCapsule_IsValid(capsule, name):
        raise ArrowTypeError(f"expected a PyCapsule named {name.decode()!r}, "
                             f"got {capsule.__class__.__name__}")
    return PyCapsule_GetPointer(capsule, name)


def import_schema_capsule(capsule):
    """The SchemaNode of an "arrow_schema" capsule (which stays untouched)."""
    cdef ArrowSchema* s = <ArrowSchema*>_capsule_pointer(capsule, b"arrow_schema")
    return import_schema_struct(s)


# ================================================================================================
# Array import
# ================================================================================================

cdef class _ImportedArray:
    """Owns an ArrowArray moved from a producer; collecting it calls the producer's release."""
    cdef ArrowArray* array

    def __dealloc__(self):
        global _live_imports
        if self.array != NULL:
            if self.array.release != NULL:
                self.array.release(self.array)
            free(self.array)
            self.array = NULL
            _live_imports -= 1


cdef class _ArrayImporter:
    """Turns the nodes of one imported ArrowArray tree into ArrayData sharing one owner."""
    cdef _ImportedArray owner

    cdef Buffer wrap(self, const void* ptr, int64_t size):
        cdef Buffer b = wrap_pointer(<const uint8_t*>ptr, size, self.owner, False)
        if ptr != NULL:
            b.ptr = <const uint8_t*>ptr   # keep the producer's address even for 0 bytes
        return b

    cdef Buffer required(self, const ArrowArray* a, int64_t i, int64_t size, str where):
        """Buffer i, which must be present unless it is empty."""
        if a.buffers[i] == NULL:
            if size > 0:
                raise ArrowInvalid(f"{where}: buffer {i} is NULL but {size} bytes are needed")
            return wrap_pointer(NULL, 0, None, False)
        return self.wrap(a.buffers[i], size)

    cdef object validity(self, const ArrowArray* a, str where):
        if a.buffers[0] == NULL:
            if a.null_count > 0:
                raise ArrowInvalid(f"{where}: null_count is {a.null_count} but the validity "
                                   "buffer is NULL")
            return None
        return self.wrap(a.buffers[0], _span(a.offset, a.length, 7, 1, where) // 8)

    cdef tuple offsets(self, const ArrowArray* a, int64_t i, int width, str where):
        """(offsets Buffer, first offset, last offset) of a binary or list node."""
        cdef int64_t n = _span(a.offset, a.length, 1, width, where)
        cdef int64_t first, last
        cdef const uint8_t* p = <const uint8_t*>a.buffers[i]
        cdef Buffer buf
        if p == NULL:
            if a.length != 0:
                raise ArrowInvalid(f"{where}: offsets buffer {i} is NULL for {a.length} values")
            return (allocate(n), 0, 0)   # a NULL offsets buffer of an empty array reads as zeros
        if width == 4:
            first = (<const int32_t*>p)[a.offset]
            last = (<const int32_t*>p)[a.offset + a.length]
        else:
            first = (<const int64_t*>p)[a.offset]
            last = (<const int64_t*>p)[a.offset + a.length]
        if first < 0 or last < first:
            raise ArrowInvalid(f"{where}: offsets run from {first} to {last}, expected "
                               "0 <= first <= last")
        return (self.wrap(p, n), first, last)

    cdef ArrayData node(self, const ArrowArray* a, object type, int depth, str where):
        cdef int64_t i, n, last, nvar, size
        cdef int kind
        cdef int64_t expected_buffers, expected_children
        cdef const int64_t* var_sizes
        cdef ArrayData child
        if depth > MAX_DEPTH:
            raise ArrowInvalid(f"{where}: array nesting deeper than {MAX_DEPTH} levels")
        if a == NULL:
            raise ArrowInvalid(f"{where}: NULL array pointer")
        if a.release == NULL:
            raise ArrowInvalid(f"{where}: the array has already been released")
        if a.length < 0 or a.offset < 0 or a.length > INT64_MAX - 1 - a.offset:
            raise ArrowInvalid(f"{where}: length {a.length} and offset {a.offset} must be "
                               "non-negative and not overflow")
        if a.null_count < -1 or a.null_count > a.length:
            raise ArrowInvalid(f"{where}: null_count {a.null_count} outside [-1, {a.length}]")
        storage = type.storage_type
        kind = storage.kind
        where = f"{where} ({type})"

        expected_buffers = _C_BUFFER_COUNT[kind]
        if kind == K_VIEW:
            if a.n_buffers < 3:
                raise ArrowInvalid(f"{where}: expected at least 3 buffers (validity, views, "
                                   f"variadic sizes), found {a.n_buffers}")
        elif a.n_buffers != expected_buffers:
            raise ArrowInvalid(f"{where}: expected {expected_buffers} buffers, found {a.n_buffers}")
        if a.n_buffers > 0 and a.buffers == NULL:
            raise ArrowInvalid(f"{where}: n_buffers is {a.n_buffers} but buffers is NULL")
        expected_children = 0 if kind == K_DICTIONARY else storage.num_fields
        if a.n_children != expected_children:
            raise ArrowInvalid(f"{where}: expected {expected_children} children, "
                               f"found {a.n_children}")
        if a.n_children > 0 and a.children == NULL:
            raise ArrowInvalid(f"{where}: n_children is {a.n_children} but children is NULL")

        bufs = []
        if kind == K_NULL:
            pass
        elif kind == K_BOOL:
            bufs = [self.validity(a, where),
                    self.required(a, 1, _span(a.offset, a.length, 7, 1, where) // 8, where)]
        elif kind == K_FIXED or kind == K_DICTIONARY:
            width = storage.index_type.byte_width if kind == K_DICTIONARY else storage.byte_width
            bufs = [self.validity(a, where),
                    self.required(a, 1, _span(a.offset, a.length, 0, width, where), where)]
        elif kind == K_BINARY or kind == K_LARGE_BINARY:
            offs, first, last = self.offsets(a, 1, 4 if kind == K_BINARY else 8, where)
            bufs = [self.validity(a, where), offs, self.required(a, 2, last, where)]
        elif kind == K_VIEW:
            bufs = [self.validity(a, where),
                    self.required(a, 1, _span(a.offset, a.length, 0, 16, where), where)]
            nvar = a.n_buffers - 3
            var_sizes = <const int64_t*>a.buffers[a.n_buffers - 1]
            if nvar > 0 and var_sizes == NULL:
                raise ArrowInvalid(f"{where}: the variadic sizes buffer is NULL for "
                                   f"{nvar} data buffers")
            for i in range(nvar):
                size = var_sizes[i]
                if size < 0:
                    raise ArrowInvalid(f"{where}: variadic buffer {i} has size {size}")
                bufs.append(self.required(a, 2 + i, size, where))
        elif kind == K_LIST or kind == K_LARGE_LIST:
            offs, first, last = self.offsets(a, 1, 4 if kind == K_LIST else 8, where)
            bufs = [self.validity(a, where), offs]
            _check_child_length(a, 0, last, where)
        elif kind == K_LIST_VIEW or kind == K_LARGE_LIST_VIEW:
            size = _span(a.offset, a.length, 0, 4 if kind == K_LIST_VIEW else 8, where)
            bufs = [self.validity(a, where), self.required(a, 1, size, where),
                    self.required(a, 2, size, where)]
        elif kind == K_FIXED_SIZE_LIST:
            bufs = [self.validity(a, where)]
            _check_child_length(a, 0, _span(a.offset, a.length, 0, storage.list_size, where),
                                where)
        elif kind == K_STRUCT:
            bufs = [self.validity(a, where)]
            for i in range(a.n_children):
                _check_child_length(a, i, a.offset + a.length, where)
        elif kind == K_SPARSE_UNION:
            bufs = [self.required(a, 0, a.offset + a.length, where)]
            for i in range(a.n_children):
                _check_child_length(a, i, a.offset + a.length, where)
        elif kind == K_DENSE_UNION:
            bufs = [self.required(a, 0, a.offset + a.length, where),
                    self.required(a, 1, _span(a.offset, a.length, 0, 4, where), where)]
        elif kind == K_REE:
            pass
        else:
            raise ArrowNotImplementedError(f"{where}: cannot import layout kind {kind}")

        children = []
        child_types = [] if kind == K_DICTIONARY else [f.type for f in storage.fields]
        for i in range(a.n_children):
            children.append(self.node(a.children[i], child_types[i], depth + 1, f"{where}.{i}"))
        dictionary = None
        if kind == K_DICTIONARY:
            if a.dictionary == NULL:
                raise ArrowInvalid(f"{where}: dictionary-encoded array without a dictionary")
            dictionary = self.node(a.dictionary, storage.value_type, depth + 1,
                                   f"{where}.dictionary")
        elif a.dictionary != NULL:
            raise ArrowInvalid(f"{where}: array has a dictionary but its type is not "
                               "dictionary-encoded")

        null_count = a.null_count
        if kind == K_NULL:
            null_count = a.length
        elif null_count < 0 and (not _has_validity(kind) or bufs[0] is None):
            null_count = 0
        return make_array_data(type, a.length, a.offset, null_count, bufs, children, dictionary)


cdef int64_t _span(int64_t offset, int64_t length, int64_t extra, int64_t width,
                   str where) except -1:
    """(offset + length + extra) * width, refusing overflow (offset + length is known safe)."""
    cdef int64_t n = offset + length
    if n > INT64_MAX - extra:
        raise ArrowInvalid(f"{where}: offset {offset} + length {length} overflows")
    n += extra
    if width > 1 and n > INT64_MAX // width:
        raise ArrowInvalid(f"{where}: {n} elements of {width} bytes overflow")
    return n * width if width > 0 else 0


cdef int _check_child_length(const ArrowArray* a, int64_t i, int64_t needed, str where) except -1:
    cdef const ArrowArray* c = a.children[i]
    if c == NULL:
        raise ArrowInvalid(f"{where}: child {i} is NULL")
    if c.length < needed:
        raise ArrowInvalid(f"{where}: child {i} has {c.length} values but the parent refers "
                           f"to {needed}")
    return 0


cdef ArrayData import_array_struct(ArrowArray* src, object type):
    global _live_imports
    if src == NULL or src.release == NULL:
        raise ArrowInvalid("cannot import an ArrowArray that has been released")
    if getattr(type, "storage_type", None) is None:     # checked before the array is moved in
        raise ArrowTypeError(f"expected a DataType, got {type.__class__.__name__}")
    cdef _ImportedArray owner = _ImportedArray.__new__(_ImportedArray)
    owner.array = <ArrowArray*>malloc(sizeof(ArrowArray))
    if owner.array == NULL:
        raise MemoryError()
    memcpy(owner.array, src, sizeof(ArrowArray))   # move: the producer's struct is now ours
    src.release = NULL
    _live_imports += 1
    cdef _ArrayImporter importer = _ArrayImporter.__new__(_ArrayImporter)
    importer.owner = owner
    return importer.node(owner.array, type, 0, "C array")


def import_array_capsule(array_capsule, type):
    """Move an "arrow_array" capsule's array out and view it as ArrayData of `type`."""
    cdef ArrowArray* a = <ArrowArray*>_capsule_pointer(array_capsule, b"arrow_array")
    return import_array_struct(a, type)


# ================================================================================================
# Stream import
# ================================================================================================

cdef object _stream_error(int code, const char* message, str what):
    text = message.decode("utf-8", "replace") if message != NULL else "no message"
    text = f"{what} failed with error {code}: {text}"
    if code == EINVAL:
        return ArrowInvalid(text)
    if code == ENOMEM:
        return MemoryError(text)
    if code == ENOSYS:
        return ArrowNotImplementedError(text)
    return OSError(code, text)


cdef class ImportedStream:
    """Iterates the ArrayData of an ArrowArrayStream moved out of a capsule.

    Each array is independent of the stream; the stream itself is released when this object is
    exhausted, closed or collected.
    """
    cdef ArrowArrayStream* stream
    cdef readonly object type

    def __dealloc__(self):
        self._release()

    cdef void _release(self) noexcept:
        global _live_imports
        if self.stream != NULL:
            if self.stream.release != NULL:
                self.stream.release(self.stream)
            free(self.stream)
            self.stream = NULL
            _live_imports -= 1

    def close(self):
        self._release()

    def __iter__(self):
        return self

    def __next__(self):
        cdef ArrowArray out
        cdef int rc
        cdef ArrowArrayStream* stream = self.stream
        if stream == NULL:
            raise StopIteration
        memset(&out, 0, sizeof(ArrowArray))
        with nogil:
            rc = stream.get_next(stream, &out)
        if rc != 0:
            err = _stream_error(rc, stream.get_last_error(stream), "get_next")
            self._release()
            raise err
        if out.release == NULL:
            self._release()
            raise StopIteration
        return import_array_struct(&out, self.type)


def import_stream_capsule(capsule, field_of):
    """(field, iterator of ArrayData) of an "arrow_array_stream": `field_of(SchemaNode)` is the
    model's reading of the stream's schema, and the `.type` of what it returns types every array."""
    global _live_imports
    cdef ArrowArrayStream* src = <ArrowArrayStream*>_capsule_pointer(capsule, b"arrow_array_stream")
    cdef ArrowSchema schema
    cdef ArrowArrayStream* stream
    cdef int rc
    if src.release == NULL:
        raise ArrowInvalid("cannot import an ArrowArrayStream that has been released")
    cdef ImportedStream reader = ImportedStream.__new__(ImportedStream)
    reader.stream = <ArrowArrayStream*>malloc(sizeof(ArrowArrayStream))
    if reader.stream == NULL:
        raise MemoryError()
    memcpy(reader.stream, src, sizeof(ArrowArrayStream))   # move
    src.release = NULL
    _live_imports += 1
    memset(&schema, 0, sizeof(ArrowSchema))
    stream = reader.stream
    with nogil:
        rc = stream.get_schema(stream, &schema)
    if rc != 0:
        err = _stream_error(rc, stream.get_last_error(stream), "get_schema")
        reader.close()
        raise err
    try:
        node = import_schema_struct(&schema)
    finally:
        if schema.release != NULL:
            schema.release(&schema)
    field = field_of(node)
    reader.type = field.type
    return field, reader
