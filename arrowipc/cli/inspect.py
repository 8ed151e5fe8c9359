"""`arrowipc inspect`: describe an Arrow IPC file or stream from its metadata.

Only message headers are decoded (plus the 8-byte length prefix of each compressed buffer, which
holds its uncompressed size), never the values: the description is quick on large inputs and still
possible for inputs whose content the reader would reject. The result is a plain dict, ready for
`json.dumps`; `render_text` turns it into the terminal report.
"""
from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any

from .. import types as T
from ..ipc._batch_decode import buffer_needed_mask, decode_record_batch_header
from ..errors import ArrowInvalid
from ..ipc import metadata as md
from ..ipc.message import read_message_from, read_message_header
from ..ipc.format import CODEC_NONE, CODEC_OPTION_NAMES, MAX_METADATA_SIZE
from ..ipc.reader import MessageDecoder, RecordBatchFileReader
from ..ipc.sources import BufferSource, open_source
from .common import EXIT_OK, Input, human_bytes, json_input, plural

if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping

    from .._core.buffer import Buffer
    from ..ipc._batch_decode import RecordBatchHeader
    from ..ipc.message import Message
    from ..ipc.sources import FileSource

    Path = tuple[int, ...]                  # child indices from the schema root
    Report = dict[str, Any]                 # the JSON-ready description `describe` returns

__all__ = ["buffer_sizes", "CODEC_NAMES", "describe", "field_name_at", "metadata_dict",
           "render_text", "run", "schema_dict"]

CODEC_NAMES = {CODEC_NONE: "none", **CODEC_OPTION_NAMES}
_I64 = struct.Struct("<q")


# -- what the input is -----------------------------------------------------------------------------

def _child_fields(t: T.DataType) -> list[T.Field]:
    if isinstance(t, T.DictionaryType):
        t = t.value_type
    return list(t.storage_type.fields)


def field_name_at(schema: T.Schema, path: Path) -> str:
    """Dotted name of the field at a dictionary path (child indices from the schema root)."""
    fields = list(schema.fields)
    names: list[str] = []
    for k in path:
        if not 0 <= k < len(fields):
            return ".".join(names + [f"<{k}>"])
        f = fields[k]
        names.append(f.name)
        fields = _child_fields(f.type)
    return ".".join(names)


def _text(b: object) -> str:
    if isinstance(b, (bytes, bytearray)):
        return bytes(b).decode("utf-8", "backslashreplace")
    return str(b)


def metadata_dict(m: Mapping[Any, Any] | None) -> dict[str, str] | None:
    """Key-value metadata as text keys and values (undecodable bytes escaped); None stays
    None."""
    if m is None:
        return None
    return {_text(k): _text(v) for k, v in m.items()}


def _field_dict(f: T.Field, path: Path, dict_ids: dict[Path, int]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": f.name, "type": str(f.type), "nullable": f.nullable}
    if f.metadata:
        out["metadata"] = metadata_dict(f.metadata)
    if isinstance(f.type, T.DictionaryType):
        out["dictionary"] = {"id": dict_ids.get(path), "index_type": str(f.type.index_type),
                             "value_type": str(f.type.value_type), "ordered": f.type.ordered}
    children = _child_fields(f.type)
    if children:
        out["children"] = [_field_dict(c, path + (k,), dict_ids) for k, c in enumerate(children)]
    return out


def schema_dict(info: md.SchemaInfo) -> dict[str, Any]:
    """The report's description of a schema: its fields (types, nullability, metadata,
    dictionary ids, children), its metadata and its byte order."""
    dict_ids = {p: i for i, d in info.dictionaries.items() for p in (d.paths or [d.path])}
    return {
        "fields": [_field_dict(f, (i,), dict_ids) for i, f in enumerate(info.schema)],
        "metadata": metadata_dict(info.schema.metadata),
        "endianness": "big" if info.endianness == md.ENDIAN_BIG else "little",
    }


# -- per-message sizes -----------------------------------------------------------------------------

class _ColumnRanges:
    """Which header buffers belong to each top-level column (cached per layout)."""

    def __init__(self, plan: tuple[Any, list[int]], ncols: int) -> None:
        self.plan = plan
        self.ncols = ncols
        self._cache: dict[tuple[int, tuple[int, ...]], list[tuple[int, int]]] = {}

    def ranges(self, header: RecordBatchHeader, version: int) -> list[tuple[int, int]]:
        key = (version, tuple(header.variadic_counts))
        hit = self._cache.get(key)
        if hit is None:
            hit = []
            for c in range(self.ncols):
                mask = buffer_needed_mask(self.plan, header, [j == c for j in range(self.ncols)],
                                          version)
                idx = [k for k, used in enumerate(mask) if used]
                hit.append((idx[0], idx[-1] + 1) if idx else (0, 0))
            if len(self._cache) < 16:
                self._cache[key] = hit
        return hit


def buffer_sizes(header: RecordBatchHeader, body: Buffer | None, where: str
                 ) -> list[tuple[int, int]]:
    """[(stored bytes, decoded bytes)] per header buffer; decoded reads the 8-byte prefix."""
    out = []
    size = body.size if body is not None else 0
    for k, (off, length) in enumerate(header.buffers_list()):
        if off < 0 or length < 0 or length > size or off > size - length:
            raise ArrowInvalid(f"{where}: buffer {k} [{off}, {off}+{length}) lies outside the "
                               f"{size}-byte body")
        if header.codec < 0 or length == 0:
            out.append((length, length))
            continue
        if length < 8:
            raise ArrowInvalid(f"{where}: compressed buffer {k} has {length} bytes, expected at "
                               f"least the 8-byte length prefix")
        assert body is not None          # a buffer of length > 0 lies inside the body (above)
        raw = _I64.unpack(body.slice(off, 8).to_pybytes())[0]
        if raw < -1:
            raise ArrowInvalid(f"{where}: compressed buffer {k} claims {raw} uncompressed bytes")
        out.append((length, length - 8 if raw == -1 else raw))
    return out


# -- the scan --------------------------------------------------------------------------------------

class _Scan:
    """Accumulates the description while messages are read."""

    def __init__(self, report: Report) -> None:
        self.r = report
        self.info: md.SchemaInfo | None = None
        self.columns: list[dict[str, Any]] | None = None
        self.ranges: _ColumnRanges | None = None
        self.versions: set[int] = set()
        self.codecs: set[int] = set()
        self.dict_state: dict[int, dict[str, int]] = {}     # id -> {"values": n}

    def schema(self, dec: MessageDecoder, version: int | None) -> None:
        info = dec.info
        assert info is not None              # the decoder has read the schema message
        self.info = info
        if version is not None:
            self.versions.add(version)
        self.r["schema"] = schema_dict(info)
        self.r["endianness"] = self.r["schema"]["endianness"]
        schema = info.schema
        self.columns = [{"name": f.name, "type": str(f.type), "stored_bytes": 0,
                         "decoded_bytes": 0} for f in schema]
        self.ranges = _ColumnRanges(dec.column_plan, len(schema))
        self.r["columns"] = self.columns
        self.r["dictionaries"] = [
            {"id": i, "fields": [field_name_at(schema, p) for p in (d.paths or [d.path])],
             "value_type": str(d.value_type), "batches": 0, "deltas": 0, "replacements": 0,
             "values": 0}
            for i, d in sorted(info.dictionaries.items())]

    def record_batch(self, msg: Message, index: int, where: str) -> None:
        assert self.columns is not None and self.ranges is not None   # schema() came first
        h = decode_record_batch_header(msg.header, msg.legacy_codec)
        self.versions.add(msg.version)
        self.codecs.add(h.codec)
        sizes = buffer_sizes(h, msg.body, where)
        for col, (lo, hi) in zip(self.columns, self.ranges.ranges(h, msg.version)):
            for stored, decoded in sizes[lo:hi]:
                col["stored_bytes"] += stored
                col["decoded_bytes"] += decoded
        entry: dict[str, Any] = {"index": index, "offset": msg.offset, "rows": h.length,
                 "metadata_bytes": msg.metadata.size, "body_bytes": msg.body_length,
                 "compression": CODEC_NAMES.get(h.codec, str(h.codec))}
        custom = msg.custom_metadata
        if custom is not None:
            entry["custom_metadata"] = metadata_dict(custom)
        self.r["batches"].append(entry)
        self.r["num_record_batches"] += 1
        self.r["num_rows"] += h.length

    def dictionary_batch(self, msg: Message, where: str) -> None:
        t = msg.header
        dict_id, is_delta = t.int64(0), t.boolean(2)
        data = t.table(1, "RecordBatch")
        if data is None:
            raise ArrowInvalid(f"{where}: dictionary batch at byte {msg.offset} has no data")
        h = decode_record_batch_header(data, msg.legacy_codec)
        self.versions.add(msg.version)
        self.codecs.add(h.codec)
        entry = next((d for d in self.r["dictionaries"] if d["id"] == dict_id), None)
        if entry is None:
            raise ArrowInvalid(f"{where}: dictionary batch at byte {msg.offset} has id {dict_id}, "
                               f"which no field of the schema uses")
        kind = "delta" if is_delta else ("replacement" if entry["batches"] else "initial")
        entry["batches"] += 1
        if kind == "delta":
            entry["deltas"] += 1
            entry["values"] += h.length
        else:
            entry["replacements"] += kind == "replacement"
            entry["values"] = h.length
        self.r["dictionary_batches"].append(
            {"id": dict_id, "kind": kind, "offset": msg.offset, "values": h.length,
             "body_bytes": msg.body_length, "compression": CODEC_NAMES.get(h.codec, str(h.codec))})

    def finish(self) -> None:
        self.r["metadata_version"] = "/".join(f"V{v + 1}" for v in sorted(self.versions)) or None
        used = sorted(self.codecs)
        if not used:
            self.r["compression"] = "none"
        else:
            self.r["compression"] = "+".join(CODEC_NAMES.get(c, str(c)) for c in used)


def _scan_stream(src: BufferSource | FileSource, scan: _Scan, where: str,
                 batch_limit: int | None = None) -> None:
    """Read schema, dictionary and record batch messages until the end-of-stream marker
    (or until `batch_limit` record batches were read)."""
    assert isinstance(src, BufferSource)     # an Input is bytes or a path: always in memory
    dec = MessageDecoder(None, where)
    start = src.pos
    first = read_message_from(src, MAX_METADATA_SIZE, where)
    if first is None:
        raise ArrowInvalid(f"{where}: expected a schema message at byte {start}, found the end "
                           f"of the stream")
    dec.read_schema_message(first)
    scan.schema(dec, first.version)
    index = 0
    while batch_limit is None or index < batch_limit:
        pos = src.pos
        msg = read_message_from(src, MAX_METADATA_SIZE, where)
        if msg is None:
            scan.r["end_of_stream_marker"] = src.pos > pos
            scan.r["trailing_bytes"] = src.end - src.pos
            return
        if msg.header_type == md.HEADER_RECORD_BATCH:
            scan.record_batch(msg, index, f"{where}: record batch {index} at byte {msg.offset}")
            index += 1
        elif msg.header_type == md.HEADER_DICTIONARY_BATCH:
            scan.dictionary_batch(msg, where)
        else:
            raise ArrowInvalid(f"{where}: unexpected {msg.type} message at byte {msg.offset}")


def _scan_file(reader: RecordBatchFileReader, scan: _Scan, batch_limit: int | None = None
               ) -> None:
    """Read the footer's dictionary and record batch blocks, as a file reader would."""
    src = reader.source
    head = BufferSource(src.buf) if isinstance(src, BufferSource) else None
    version = None
    if head is not None:                     # the schema message after the magic: its version
        head.pos = 8
        try:
            first = read_message_header(head, MAX_METADATA_SIZE, "file")
            version = first.version if first is not None else None
        except ArrowInvalid:
            version = None
    scan.schema(reader.decoder, version)
    for i in range(reader.num_dictionaries):
        msg = reader.read_block_message("dictionary", i)
        if msg.header_type != md.HEADER_DICTIONARY_BATCH:
            raise ArrowInvalid(f"file: dictionary block {i} holds a {msg.type} message")
        scan.dictionary_batch(msg, "file")
    count = reader.num_record_batches
    for i in range(count if batch_limit is None else min(count, batch_limit)):
        msg = reader.read_block_message("record batch", i)
        if msg.header_type != md.HEADER_RECORD_BATCH:
            raise ArrowInvalid(f"file: record batch block {i} holds a {msg.type} message")
        scan.record_batch(msg, i, f"file: record batch {i} at byte {msg.offset}")
    scan.r["footer_metadata"] = metadata_dict(reader.metadata)


def describe(inp: Input, batch_limit: int | None = None) -> Report:
    """The inspect report of an input; report["error"] holds the first problem met, if any.
    With `batch_limit`, reading stops after that many record batches."""
    r: Report = {"path": inp.label, "size_bytes": inp.size, "format": inp.kind,
         "magic": inp.detail if inp.kind == "file" else None,
         "framing": inp.detail if inp.kind == "stream" else "continuation",
         "metadata_version": None, "endianness": None, "schema": None,
         "num_record_batches": 0, "num_rows": 0, "compression": None, "columns": [],
         "dictionaries": [], "dictionary_batches": [], "batches": [], "error": None}
    scan = _Scan(r)
    try:
        if inp.kind == "file":
            try:
                reader = RecordBatchFileReader(inp.source)
            except ArrowInvalid as e:
                # no usable footer (a crashed writer, a truncated copy): describe the stream
                # section after the magic instead, as `recover` would read it
                r["footer_error"] = str(e)
                r["error"] = str(e)
                src = open_source(inp.source)
                src.pos = 8
                _scan_stream(src, scan, "file", batch_limit)
            else:
                _scan_file(reader, scan, batch_limit)
        else:
            _scan_stream(open_source(inp.source), scan, "stream", batch_limit)
    except ArrowInvalid as e:
        r["error"] = str(e)
    scan.finish()
    return r


# -- text rendering --------------------------------------------------------------------------------

def _clip(s: str, width: int = 100) -> str:
    return s if len(s) <= width else s[:width - 1] + "…"


def _metadata_lines(m: dict[str, str] | None, indent: str) -> list[str]:
    if not m:
        return []
    return [f"{indent}{_clip(k, 40)} = {_clip(v)}" for k, v in m.items()]


def _field_lines(f: dict[str, Any], indent: str) -> list[str]:
    line = f"{indent}{f['name']}: {f['type']}" + ("" if f["nullable"] else " not null")
    d = f.get("dictionary")
    if d is not None:
        line += f"  [dictionary id {d['id']}{', ordered' if d['ordered'] else ''}]"
    out = [line]
    out += _metadata_lines(f.get("metadata"), indent + "    | ")
    for c in f.get("children", []):
        out += _field_lines(c, indent + "    ")
    return out


def _table(rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for r in rows:
        cells = [c.rjust(w) if i in right else c.ljust(w)
                 for i, (c, w) in enumerate(zip(r, widths))]
        out.append("  " + "  ".join(cells).rstrip())
    return out


def render_text(r: Report, max_batches: int = 10) -> str:
    """The terminal report of a `describe` result (at most `max_batches` batches listed)."""
    lines = []
    fmt = "file" if r["format"] == "file" else "stream"
    lines.append(f"{r['path']}: Arrow IPC {fmt}, {r['size_bytes']:,} bytes")
    if r["format"] == "file":
        kind = f"file, magic {r['magic']}"
    else:
        kind = "stream" + (", legacy framing (pre-0.15, no continuation marker)"
                           if r["framing"] == "legacy" else "")
    lines.append(f"  format          {kind}")
    lines.append(f"  metadata        {r['metadata_version'] or 'unknown'}, "
                 f"{r['endianness'] or 'unknown'}-endian")
    rows = [b["rows"] for b in r["batches"]]
    per = ""
    if rows:
        shown = ", ".join(f"{n:,}" for n in rows[:max_batches])
        per = f" ({shown}{', …' if len(rows) > max_batches else ''})"
    lines.append(f"  record batches  {r['num_record_batches']:,}, "
                 f"{plural(r['num_rows'], 'row')}{per}")
    lines.append(f"  compression     {r['compression']}")
    if r["format"] == "stream" and r["error"] is None:
        eos = "end-of-stream marker" if r.get("end_of_stream_marker") else "no end-of-stream marker"
        extra = f", {r['trailing_bytes']:,} bytes after it" if r.get("trailing_bytes") else ""
        lines.append(f"  ends with       {eos}{extra}")
    s = r["schema"]
    if s is not None:
        lines.append(f"schema ({plural(len(s['fields']), 'field')}):")
        for f in s["fields"]:
            lines += _field_lines(f, "  ")
        if s["metadata"]:
            lines.append("schema metadata:")
            lines += _metadata_lines(s["metadata"], "  ")
    if r["columns"]:
        lines.append("columns (stored: bytes in the input; decoded: bytes in memory):")
        table = [["column", "type", "stored", "decoded"]]
        for c in r["columns"]:
            table.append([c["name"], _clip(c["type"], 40), human_bytes(c["stored_bytes"]),
                          human_bytes(c["decoded_bytes"])])
        lines += _table(table, {2, 3})
    if r["dictionaries"]:
        lines.append("dictionaries:")
        for d in r["dictionaries"]:
            lines.append(f"  id {d['id']} ({', '.join(d['fields'])}; values "
                         f"{_clip(d['value_type'], 40)}): {plural(d['batches'], 'batch')}, "
                         f"{plural(d['deltas'], 'delta')}, "
                         f"{plural(d['replacements'], 'replacement')}, "
                         f"{plural(d['values'], 'value')}")
    if r.get("footer_metadata"):
        lines.append("footer metadata:")
        lines += _metadata_lines(r["footer_metadata"], "  ")
    tagged = [b for b in r["batches"] if b.get("custom_metadata")]
    if tagged:
        lines.append("batch metadata:")
        for b in tagged[:max_batches]:
            for k, v in b["custom_metadata"].items():
                lines.append(f"  batch {b['index']}: {_clip(k, 40)} = {_clip(v)}")
        if len(tagged) > max_batches:
            lines.append(f"  … {len(tagged) - max_batches} more batches with metadata")
    return "\n".join(lines)


def _run_dataset(args: argparse.Namespace, files: list[str]) -> int:
    """`arrowipc inspect DIR`: each file's report, then the totals."""
    reports = [describe(Input(path)) for path in files]
    total = {"files": len(files),
             "record_batches": sum(r["num_record_batches"] for r in reports),
             "rows": sum(r["num_rows"] for r in reports),
             "size_bytes": sum(r["size_bytes"] for r in reports),
             "files_with_errors": sum(1 for r in reports if r["error"])}
    if args.json:
        import json
        print(json.dumps({"dataset": args.file, "files": reports, "total": total}, indent=2,
                         ensure_ascii=False))
    else:
        for r in reports:
            print(render_text(r, max_batches=args.max_batches))
            print()
        print(f"total: {plural(total['files'], 'file')}, "
              f"{plural(total['record_batches'], 'record batch')}, "
              f"{plural(total['rows'], 'row')}, {total['size_bytes']:,} bytes")
    bad = [r for r in reports if r["error"]]
    if bad:
        raise ArrowInvalid(f"{bad[0]['path']}: {bad[0]['error']}")
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    """`arrowipc inspect` with parsed arguments; returns the exit status."""
    from .datasets import dataset_files
    files = dataset_files(args.file)
    if files is not None:                   # a directory or a glob: a dataset
        return _run_dataset(args, files)
    inp = json_input(args, lambda path, message: {"path": path, "error": message})
    report = describe(inp)
    if args.json:
        import json
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(render_text(report, max_batches=args.max_batches))
    if report["error"]:
            raise ArrowInvalid(report["error"])
    return EXIT_OK
