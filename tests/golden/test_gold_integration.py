"""Arrow integration gold files (apache/arrow-testing) read and rewritten by arrowipc.

For every gold file whose types belong to the current capability level, in both its `.stream`
and `.arrow_file` forms:
  * arrowipc reads what pyarrow reads: schema (with field and schema metadata), every batch,
    per-batch custom metadata, file footer metadata, and the same Python values;
  * arrowipc rewrites what it read (stream and file writers) and pyarrow reads the rewrite back,
    fully validated, equal to the original.

The corpus is the repository's copy under tests/data/arrow-testing (or $ARROWIPC_TESTING_DIR).
"""
import os

import pytest

pa = pytest.importorskip("pyarrow")
import pyarrow.ipc as pa_ipc  # noqa: E402

import arrowipc  # noqa: E402
from arrowipc import ipc  # noqa: E402

import strategies as S  # noqa: E402
import testdata  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Capability table: the single place that says which gold file belongs to which issue.
# Issue 3 flips its entries (or adds "issue3" to RUN_LEVELS) when dictionaries, unions,
# extension types, views and run-end encoding land.

GOLD_DIRS = ("0.14.1", "0.17.1", "1.0.0-bigendian", "1.0.0-littleendian", "2.0.0-compression",
             "4.0.0-shareddict", "cpp-21.0.0")
RUN_LEVELS = frozenset({"issue2", "issue3", "issue4"})

GOLD_CAPABILITY = {
    # issue 2: primitive, binary, temporal, decimal, nested (list/struct/map) types
    "generated_binary": "issue2",
    "generated_binary_no_batches": "issue2",
    "generated_binary_zerolength": "issue2",
    "generated_custom_metadata": "issue2",
    "generated_datetime": "issue2",
    "generated_decimal": "issue2",
    "generated_decimal256": "issue2",
    "generated_decimal32": "issue2",
    "generated_decimal64": "issue2",
    "generated_duplicate_fieldnames": "issue2",
    "generated_duration": "issue2",
    "generated_interval": "issue2",
    "generated_interval_mdn": "issue2",
    "generated_large_binary": "issue2",
    "generated_map": "issue2",
    "generated_map_non_canonical": "issue2",
    "generated_nested": "issue2",
    "generated_nested_large_offsets": "issue2",
    "generated_null": "issue2",
    "generated_null_trivial": "issue2",
    "generated_primitive": "issue2",
    "generated_primitive_large_offsets": "issue2",
    "generated_primitive_no_batches": "issue2",
    "generated_primitive_zerolength": "issue2",
    "generated_recursive_nested": "issue2",
    # issue 3: dictionaries, unions, extension types, views, run-end encoding
    "generated_binary_view": "issue3",
    "generated_dictionary": "issue3",
    "generated_dictionary_unsigned": "issue3",
    "generated_extension": "issue3",
    "generated_list_view": "issue3",
    "generated_nested_dictionary": "issue3",
    "generated_run_end_encoded": "issue3",
    "generated_union": "issue3",
    "generated_shared_dict": "issue3",
    # issue 4: compressed bodies (2.0.0-compression)
    "generated_lz4": "issue4",
    "generated_zstd": "issue4",
    "generated_uncompressible_lz4": "issue4",
    "generated_uncompressible_zstd": "issue4",
}

# Name fragments of issue-3 files; used for gold files the table does not list yet.
ISSUE3_NAME_MARKERS = ("dictionary", "union", "extension", "list_view", "binary_view",
                       "run_end_encoded", "nested_dictionary")


def capability(stem: str) -> str:
    if stem in GOLD_CAPABILITY:
        return GOLD_CAPABILITY[stem]
    return "issue3" if any(marker in stem for marker in ISSUE3_NAME_MARKERS) else "issue2"


def integration_dir(gold_dir: str) -> str:
    return testdata.required(testdata.integration_dir(gold_dir))


def gold_cases():
    """(gold dir, stem) pairs to run, as pytest params with readable ids."""
    params = []
    for gold_dir in GOLD_DIRS:
        folder = integration_dir(gold_dir)
        stems = sorted({name[: -len(".stream")] for name in os.listdir(folder) if name.endswith(".stream")})
        for stem in stems:
            if capability(stem) in RUN_LEVELS:
                params.append(pytest.param(gold_dir, stem, id=f"{gold_dir}/{stem[len('generated_'):]}"))
    assert params, f"no gold files under {testdata.ARROW_TESTING}"
    return params


GOLD_CASES = gold_cases()
FORM_SUFFIX = {"stream": ".stream", "file": ".arrow_file"}


def gold_path(gold_dir: str, stem: str, form: str) -> str:
    return os.path.join(integration_dir(gold_dir), stem + FORM_SUFFIX[form])


def as_kv(metadata):
    """None stays None; pyarrow KeyValueMetadata and dicts become dict bytes -> bytes."""
    if metadata is None:
        return None
    return {bytes(k): bytes(v) for k, v in dict(metadata).items()}


# ---------------------------------------------------------------------------------------------
# What pyarrow reads (the oracle): schema, batches with custom metadata, footer metadata.

class PyarrowReading:
    def __init__(self, source, form: str):
        if form == "stream":
            reader = pa_ipc.open_stream(source)
            pairs = list(reader.iter_batches_with_custom_metadata())
            self.footer_metadata = None
        else:
            reader = pa_ipc.open_file(source)
            pairs = [reader.get_batch_with_custom_metadata(i) for i in range(reader.num_record_batches)]
            self.footer_metadata = as_kv(reader.metadata)
        self.schema = reader.schema
        self.batches = [pair[0] for pair in pairs]
        self.custom_metadata = [as_kv(pair[1]) for pair in pairs]
        self.table = pa.Table.from_batches(self.batches, schema=self.schema)
        # some 1.0.0 gold files hold values pyarrow's full validation rejects (date64 that are
        # not whole days, decimals beyond their precision); rewrites of those are held to the
        # same standard as the original
        try:
            for batch in self.batches:
                batch.validate(full=True)
            self.fully_valid = True
        except pa.ArrowInvalid:
            self.fully_valid = False


class ArrowipcReading:
    def __init__(self, source, form: str):
        if form == "stream":
            with ipc.open_stream(source) as reader:
                self.schema = reader.schema
                pairs = []
                while True:
                    try:
                        batch, custom = reader.read_next_batch_with_custom_metadata()
                    except StopIteration:
                        break
                    pairs.append((batch, custom))
                self.footer_metadata = None
        else:
            with ipc.open_file(source) as reader:
                self.schema = reader.schema
                pairs = [tuple(reader.get_batch_with_custom_metadata(i)) for i in range(reader.num_record_batches)]
                self.footer_metadata = reader.metadata
        self.batches = [pair[0] for pair in pairs]
        self.custom_metadata = [pair[1] for pair in pairs]


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


# ---------------------------------------------------------------------------------------------

def test_capability_table_classifies_every_gold_file():
    for gold_dir in GOLD_DIRS:
        folder = integration_dir(gold_dir)
        for name in os.listdir(folder):
            if name.endswith(".stream"):
                stem = name[: -len(".stream")]
                assert capability(stem) in ("issue2", "issue3", "issue4"), stem
                # the brief's rule: these name fragments are never issue 2
                if any(marker in stem for marker in ISSUE3_NAME_MARKERS):
                    assert capability(stem) != "issue2", stem
                # every file comes in both forms
                assert os.path.exists(os.path.join(folder, stem + ".arrow_file")), stem


@pytest.mark.parametrize("form", ["stream", "file"])
@pytest.mark.parametrize("gold_dir,stem", GOLD_CASES)
def test_gold_read_matches_pyarrow(gold_dir, stem, form):
    path = gold_path(gold_dir, stem, form)
    expected = PyarrowReading(path, form)
    got = ArrowipcReading(path, form)

    S.assert_schema_equal(S.to_pa_schema(got.schema), expected.schema)
    assert len(got.batches) == len(expected.batches)
    for ours, theirs in zip(got.batches, expected.batches):
        S.assert_batch_matches(ours, theirs)
    assert [as_kv(m) for m in got.custom_metadata] == expected.custom_metadata
    assert as_kv(got.footer_metadata) == expected.footer_metadata

    # read_all on a fresh reader: the whole table, chunked as the batches were written
    opener = ipc.open_stream if form == "stream" else ipc.open_file
    with opener(path) as reader:
        table = reader.read_all()
    S.assert_table_matches(table, expected.table)


@pytest.mark.parametrize("rewrite_form", ["stream", "file"])
@pytest.mark.parametrize("form", ["stream", "file"])
@pytest.mark.parametrize("gold_dir,stem", GOLD_CASES)
def test_gold_rewrite_read_by_pyarrow(gold_dir, stem, form, rewrite_form):
    data = read_bytes(gold_path(gold_dir, stem, form))
    expected = PyarrowReading(pa.py_buffer(data), form)
    got = ArrowipcReading(data, form)

    sink = arrowipc.BufferOutputStream()
    if rewrite_form == "stream":
        writer = ipc.new_stream(sink, got.schema)
    else:
        writer = ipc.new_file(sink, got.schema, metadata=got.footer_metadata)
    with writer:
        for batch, custom in zip(got.batches, got.custom_metadata):
            writer.write_batch(batch, custom_metadata=custom)
    rewritten = S.as_bytes(sink.getvalue())

    S.assert_pa_reads_back(rewritten, expected.table, rewrite_form, [b.num_rows for b in expected.batches],
                           full_validation=expected.fully_valid)
    reread = PyarrowReading(pa.py_buffer(rewritten), rewrite_form)
    assert reread.custom_metadata == expected.custom_metadata
    if form == "file" and rewrite_form == "file":
        assert reread.footer_metadata == expected.footer_metadata
