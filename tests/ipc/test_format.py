"""ipc.format: the facts of the format are defined once, agree with the bytes the engine writes and
reads, and `sniff()` names what an input is."""
import io
import os
import pathlib
import re

import pytest

import arrowipc
from arrowipc import ipc
from arrowipc.ipc import format as F
from arrowipc.ipc import metadata as md
from arrowipc.ipc import options as opts

PACKAGE = pathlib.Path(arrowipc.__file__).parent


def _stream_bytes(**kw):
    batch = arrowipc.record_batch({"a": [1, 2, 3]})
    out = io.BytesIO()
    with ipc.new_stream(out, batch.schema, **kw) as w:
        w.write_batch(batch)
    return out.getvalue()


def test_written_stream_uses_the_continuation_marker_and_eos():
    data = _stream_bytes()
    assert data[:4] == F.CONTINUATION == b"\xff\xff\xff\xff"
    assert data[-8:] == F.EOS_MARKER == b"\xff\xff\xff\xff\x00\x00\x00\x00"


def test_legacy_stream_ends_with_the_legacy_eos():
    data = _stream_bytes(options=ipc.IpcWriteOptions(use_legacy_format=True))
    assert data[-4:] == F.LEGACY_EOS == b"\x00\x00\x00\x00"
    assert data[:4] != F.CONTINUATION


@pytest.mark.parametrize("magic", F.FILE_MAGICS)
def test_file_magics_lead_and_end_a_file(tmp_path, magic):
    path = tmp_path / "f.arrow"
    batch = arrowipc.record_batch({"a": [1]})
    with ipc.new_file(str(path), batch.schema, magic=magic) as w:
        w.write_batch(batch)
    data = path.read_bytes()
    assert data.startswith(magic) and data.endswith(magic)
    assert len(magic) + (-len(magic)) % 8 == 8          # padded to 8 bytes at the start
    assert ipc.open_file(str(path)).read_all().num_rows == 1


def test_header_ids_are_the_ones_messages_carry():
    msgs = list(ipc.MessageReader.open_stream(_stream_bytes()))
    assert [m.header_type for m in msgs] == [F.HEADER_SCHEMA, F.HEADER_RECORD_BATCH]
    assert [m.type for m in msgs] == ["schema", "record batch"]
    assert F.HEADER_NAMES[F.HEADER_RECORD_BATCH] == "RecordBatch"


def test_codec_ids_and_spellings():
    assert F.COMPRESSION_IDS == {None: -1, "lz4": 0, "lz4_frame": 0, "zstd": 1}
    assert F.CODEC_SPEC_NAMES == {0: "LZ4_FRAME", 1: "ZSTD"}
    assert F.CODEC_OPTION_NAMES == {0: "lz4", 1: "zstd"}
    assert F.RAW_MARKER == F.CODEC_NONE == -1


def test_other_modules_re_export_the_same_objects():
    assert md.HEADER_RECORD_BATCH is F.HEADER_RECORD_BATCH
    assert md.MAX_NESTING_DEPTH is F.MAX_NESTING_DEPTH is opts.MAX_NESTING_DEPTH
    assert opts.MAX_METADATA_SIZE is F.MAX_METADATA_SIZE
    assert ipc.IpcReadOptions().max_nesting_depth == F.MAX_NESTING_DEPTH


@pytest.mark.parametrize("head, expected", [
    (b"ARROW1\x00\x00", "file"),
    (b"ALKAID1\x00", "file"),
    (b"\xff\xff\xff\xff\x10\x00\x00\x00", "stream"),
    (b"\x10\x01\x00\x00\x00\x00\x00\x00", "stream"),      # pre-0.15: a bare metadata length
    (b"\x00\x00\x00\x00", "stream"),                      # the legacy end of stream alone
    (b"", "stream"),                                      # empty: a stream with no messages
    (b"PAR1\x15\x04\x15\x00", None),
    (b"FEA1\x00\x00\x00\x00", None),
    (b"\x00\x00\x00\x7f\x00\x00\x00\x00", None),          # a length past MAX_METADATA_SIZE
    (b"{\"a\": 1}", None),
])
def test_sniff(head, expected):
    assert F.sniff(head) == expected


def test_describe_bytes_names_foreign_formats():
    assert F.describe_bytes(b"PAR1\x00") == "a Parquet file, not Arrow IPC, starting 50 41 52 31 00"
    assert F.describe_bytes(b"\x01\x02") == "01 02"
    assert F.file_magic(b"ALKAID1\x00") == b"ALKAID1" and F.file_magic(b"ARROW") is None


# The bytes of a format fact may appear as a literal only in format.py (the Cython codec writes
# the continuation marker itself; the tests above check it agrees).
_FACT_LITERALS = [r'b"ARROW1"', r'b"ALKAID1"', r'b"\\xff\\xff\\xff\\xff"', r'b"FEA1"', r'b"PAR1"',
                  r'"LZ4_FRAME"']
_ALLOWED = {"ipc/format.py", "ipc/_framing.pyx", "ipc/_batch_encode.pyx"}


def test_format_facts_are_spelled_only_in_format_py():
    offenders = []
    for path in PACKAGE.rglob("*"):
        if path.suffix not in (".py", ".pyx") or "examples" in path.parts:
            continue
        rel = path.relative_to(PACKAGE).as_posix()
        if rel in _ALLOWED or rel.startswith("dissociated/"):
            continue
        text = path.read_text()
        for lit in _FACT_LITERALS:
            for line in text.splitlines():
                if re.search(re.escape(lit.replace("\\\\", "\\")), line) and not \
                        line.lstrip().startswith("#"):
                    offenders.append(f"{rel}: {line.strip()}")
    assert offenders == [], offenders
    assert os.path.exists(PACKAGE / "ipc" / "format.py")
