"""The Spark/Hive layout rules: skipped names, escapes, partition segments."""
import pytest

from arrowipc.dataset import layout
from arrowipc.dataset.layout import (
    DEFAULT_PARTITION_NAME, decode_segment_value, escape_path_name, format_partition_path,
    format_partition_segment, is_skipped_name, parse_partition_path, parse_partition_segment,
    temporary_file_name, unescape_path_name)


@pytest.mark.parametrize("name", [
    "_SUCCESS", "_temporary", ".spark-staging-0b3c", "part-0.arrow._COPYING_",
    ".part-0.arrow.crc", "part-0.arrow.crc", "_metadata", ".hidden", "_common_metadata",
])
def test_side_files_and_hidden_names_are_skipped(name):
    assert is_skipped_name(name)


@pytest.mark.parametrize("name", ["part-00000-abc.arrow", "year=2026", "_col=1", "data.arrows"])
def test_data_names_and_underscore_partition_directories_are_kept(name):
    assert not is_skipped_name(name)


def test_ignore_prefixes_are_the_callers_but_side_files_are_always_skipped():
    assert not is_skipped_name(".hidden", ignore_prefixes=[])
    assert is_skipped_name("tmp-1.arrow", ignore_prefixes=["tmp"])
    assert is_skipped_name("_SUCCESS", ignore_prefixes=[])
    assert is_skipped_name("x.arrow._COPYING_", ignore_prefixes=None)


def test_escape_uses_sparks_character_set():
    # Spark's charToEscape: control characters, DEL and "#%'*/:=?\{[]^
    assert escape_path_name('a"#%\'*/:=?\\{[]^b') == "a%22%23%25%27%2A%2F%3A%3D%3F%5C%7B%5B%5D%5Eb"
    assert escape_path_name("\x01\x1f\x7f") == "%01%1F%7F"
    # space, +, <, >, |, non-ASCII are literal (Windows-only escapes are not applied)
    assert escape_path_name("a b+c<d>|é") == "a b+c<d>|é"
    assert escape_path_name("plain") == "plain"


def test_unescape_inverts_escape_for_every_ascii_character():
    text = "".join(chr(c) for c in range(1, 128))
    assert unescape_path_name(escape_path_name(text)) == text


def test_unescape_decodes_two_ascii_hex_digits_only():
    assert unescape_path_name("a%2Fb") == "a/b"
    assert unescape_path_name("a%2fb") == "a/b"
    assert unescape_path_name("%zz") == "%zz"  # not hex: literal
    assert unescape_path_name("100%") == "100%"  # too short: literal
    assert unescape_path_name("%4") == "%4"
    assert unescape_path_name("%41") == "A"  # at the very end still decodes
    assert unescape_path_name("%+F") == "%+F"  # no sign
    assert unescape_path_name("%-0") == "%-0"
    assert unescape_path_name("%\uff21\uff21") == "%\uff21\uff21"  # no full-width digits
    assert unescape_path_name("a+b") == "a+b"
    # one character per escape, as Spark reads it
    assert unescape_path_name("%C3%A9") == "\xc3\xa9"


SPARK_CASES = ["%41", "%+F", "%-1", "%-0", "%zz", "100%", "%C3%A9", "%\uff21\uff21",
               "%\u0661\u0662", "a+b", "%4", "%%41", "%2f%2F", "x=%3D", "%0", ""]


def test_escapes_are_sparks_own(tmp_path):
    """Spark's ExternalCatalogUtils, called in the JVM, is the oracle."""
    pytest.importorskip("pyspark")
    import shutil
    if shutil.which("java") is None and not __import__("os").environ.get("JAVA_HOME"):
        pytest.skip("no Java runtime")
    from pyspark.java_gateway import launch_gateway
    gateway = launch_gateway()
    try:
        utils = gateway.jvm.org.apache.spark.sql.catalyst.catalog.ExternalCatalogUtils
        text = "".join(chr(c) for c in range(1, 300))
        assert escape_path_name(text) == utils.escapePathName(text)
        for case in SPARK_CASES:
            assert unescape_path_name(case) == utils.unescapePathName(case), case
        for value in ["a b", "", "x/y", "é", "%", "__HIVE_DEFAULT_PARTITION__"]:
            spark = utils.getPartitionPathString("k", value)
            assert format_partition_segment("k", value) == spark, value
    finally:
        gateway.shutdown()


def test_decode_segment_value_reads_utf8_runs_as_pyarrow_writes_them():
    assert decode_segment_value("%C3%A9t%C3%A9") == "été"
    assert decode_segment_value("a%20b") == "a b"
    assert decode_segment_value("%E9") == "\xe9"  # not UTF-8: Spark's reading
    assert decode_segment_value("x%2Fy") == "x/y"


def test_format_segment_writes_null_and_empty_as_the_default_partition():
    assert format_partition_segment("k", None) == f"k={DEFAULT_PARTITION_NAME}"
    assert format_partition_segment("k", "") == f"k={DEFAULT_PARTITION_NAME}"
    assert format_partition_segment("a=b", "x/y") == "a%3Db=x%2Fy"
    assert format_partition_path([("year", "2026"), ("c", "a b")]) == "year=2026/c=a b"


def test_parse_segment_inverts_format():
    for column, value in [("k", "x/y"), ("a=b", "%"), ("y", None), ("z", "c+d"), ("é", "ü")]:
        assert parse_partition_segment(format_partition_segment(column, value)) == (column, value)
    assert parse_partition_segment("k=") == ("k", "")
    assert parse_partition_segment("=v") is None
    assert parse_partition_segment("plain") is None
    assert parse_partition_segment("k=a=b") == ("k", "a=b")


def test_parse_path_passes_over_segments_that_are_not_partitions():
    assert parse_partition_path("data/year=2026/x/c=DE") == [("year", "2026"), ("c", "DE")]
    assert parse_partition_path("") == []


def test_temporary_names_are_skipped_by_readers():
    assert is_skipped_name(temporary_file_name("part-0.arrow", "abc"))
    assert "part-0.arrow" in temporary_file_name("part-0.arrow", "abc")


def test_all_names_exist():
    for name in layout.__all__:
        assert hasattr(layout, name)
