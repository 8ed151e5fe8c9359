"""The layout of partitioned data on disk, as Spark and Hive write it: names, escapes, segments.

Pure functions over strings; nothing here touches a file system or an arrowipc object, so the
dataset reader, its writer and the Spark sources share one set of rules.

Names a reader skips (`is_skipped_name`):

    always      `_temporary` (uncommitted task output), `.spark-staging-*` (a dynamic
                partition overwrite in progress), `*._COPYING_` (a copy in progress),
                `*.crc` (Hadoop checksum side files), `_SUCCESS` (the commit marker; never
                required)
    by prefix   a name starting with one of the ignore prefixes (`.` and `_` by default),
                except a `_`-name holding `=`, which is a partition directory (`_col=1`), as
                Spark reads it

A partition directory is one `column=value` segment. Column and value are escaped as Spark's
ExternalCatalogUtils.escapePathName (and Hive's FileUtils) do: each character of ESCAPED_CHARS
becomes `%XX` (two upper-case hex digits of its code), everything else is kept as it is (a space
and `+` are literal; so is every non-ASCII character). A null value, and an empty string, are
written as `__HIVE_DEFAULT_PARTITION__`, which reads back as null.

`unescape_path_name` is Spark's unescapePathName exactly (checked against Spark 4's JVM code):
`%` and two ASCII hex digits become the character of that code; anything else is literal.
`decode_segment_value` reads what other writers write as well: a run of escapes that spells a
UTF-8 sequence (pyarrow's URI encoding writes `é` as `%C3%A9`) becomes that character,
where Spark would give two Latin-1 characters; Spark itself never escapes a non-ASCII character,
so for every name Spark or Hive writes the two agree.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = [
    "DEFAULT_PARTITION_NAME",
    "DEFAULT_IGNORE_PREFIXES",
    "ESCAPED_CHARS",
    "SUCCESS_NAME",
    "TEMPORARY_NAME",
    "decode_segment_value",
    "escape_path_name",
    "format_partition_path",
    "format_partition_segment",
    "is_skipped_name",
    "parse_partition_path",
    "parse_partition_segment",
    "temporary_file_name",
    "unescape_path_name",
]

DEFAULT_PARTITION_NAME = "__HIVE_DEFAULT_PARTITION__"
DEFAULT_IGNORE_PREFIXES: tuple[str, ...] = (".", "_")
SUCCESS_NAME = "_SUCCESS"
TEMPORARY_NAME = "_temporary"

# The characters Spark's ExternalCatalogUtils.charToEscape holds (on every OS but Windows, where
# it adds ' ', '<', '>' and '|'): the ASCII control characters 0x01-0x1F, DEL and these.
ESCAPED_CHARS: frozenset[str] = frozenset(
    [chr(c) for c in range(0x01, 0x20)] + list("\"#%'*/:=?\\\x7f{[]^"))


def is_skipped_name(name: str, ignore_prefixes: Iterable[str] | None = DEFAULT_IGNORE_PREFIXES
                    ) -> bool:
    """True when a file or directory named `name` (a base name) is not part of the data."""
    if (name == TEMPORARY_NAME or name == SUCCESS_NAME or name.startswith(".spark-staging-")
            or name.endswith("._COPYING_") or name.endswith(".crc")):
        return True
    if name.startswith("_") and "=" in name:
        return False
    return any(prefix and name.startswith(prefix) for prefix in (ignore_prefixes or ()))


def escape_path_name(text: str) -> str:
    """`text` with each character of ESCAPED_CHARS written as `%XX`, as Spark escapes it."""
    if not any(c in ESCAPED_CHARS for c in text):
        return text
    return "".join(f"%{ord(c):02X}" if c in ESCAPED_CHARS else c for c in text)


_HEX = frozenset("0123456789abcdefABCDEF")


def _escape_code(pair: str) -> int:
    """The code of `%XX`'s two characters when both are ASCII hex digits, else -1 (Spark 4
    decodes nothing else: no sign, no other script's digits)."""
    if pair[0] in _HEX and pair[1] in _HEX:
        return int(pair, 16)
    return -1


def _unescaped_units(text: str) -> list[tuple[str, bool]]:
    """Spark's unescapePathName as (character, came from an escape) pairs."""
    units: list[tuple[str, bool]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "%" and i + 2 < n:
            code = _escape_code(text[i + 1:i + 3])
            if code >= 0:
                units.append((chr(code), True))
                i += 3
                continue
        units.append((c, False))
        i += 1
    return units


def unescape_path_name(text: str) -> str:
    """Spark's (and Hive's) unescapePathName: each valid `%XX` becomes the character of code XX."""
    if "%" not in text:
        return text
    return "".join(c for c, _ in _unescaped_units(text))


def decode_segment_value(text: str) -> str:
    """`unescape_path_name`, except that a run of escapes spelling UTF-8 decodes as UTF-8."""
    if "%" not in text:
        return text
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if not run:
            return
        raw = "".join(run)
        if any(ord(c) > 0x7F for c in raw):
            try:
                raw = raw.encode("latin-1").decode("utf-8")
            except UnicodeDecodeError:
                pass  # not UTF-8: keep Spark's reading, one character per escape
        out.append(raw)
        run.clear()

    for c, escaped in _unescaped_units(text):
        if escaped:
            run.append(c)
        else:
            flush()
            out.append(c)
    flush()
    return "".join(out)


def format_partition_segment(column: str, value: str | None) -> str:
    """`column=value` escaped as Spark writes it; None and "" become __HIVE_DEFAULT_PARTITION__."""
    written = DEFAULT_PARTITION_NAME if value is None or value == "" else escape_path_name(value)
    return f"{escape_path_name(column)}={written}"


def format_partition_path(pairs: Sequence[tuple[str, str | None]]) -> str:
    """The relative directory `a=1/b=x` of partition (column, value text) pairs, in order."""
    return "/".join(format_partition_segment(column, value) for column, value in pairs)


def parse_partition_segment(segment: str) -> tuple[str, str | None] | None:
    """(column, value) of a `column=value` directory name, or None when it is not one.

    The column and value are unescaped; `__HIVE_DEFAULT_PARTITION__` is None. The first `=`
    splits (an escaped `=` in a column name is `%3D`). An empty value reads as "" (as pyarrow
    reads `col=`; Spark refuses it), an empty column name is not a partition segment.
    """
    column, eq, raw = segment.partition("=")
    if not eq or not column:
        return None
    value = None if raw == DEFAULT_PARTITION_NAME else decode_segment_value(raw)
    return decode_segment_value(column), value


def parse_partition_path(relative_dir: str) -> list[tuple[str, str | None]]:
    """The (column, value) pairs of the `column=value` segments of a relative directory path.

    Segments that are not `column=value` are passed over, as pyarrow's hive partitioning does.
    """
    pairs: list[tuple[str, str | None]] = []
    for segment in relative_dir.split("/"):
        parsed = parse_partition_segment(segment) if segment else None
        if parsed is not None:
            pairs.append(parsed)
    return pairs


def temporary_file_name(basename: str, token: str) -> str:
    """The name a file is written under before it is renamed to `basename`.

    It starts with `.`, so every reader (ours, Spark's, pyarrow's default) skips it while the
    write is in progress or after a crash left it behind; `token` keeps writers apart.
    """
    return f".{basename}.{token}.inprogress"
