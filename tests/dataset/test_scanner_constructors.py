"""Scanner.from_batches, from_dataset and from_fragment as pyarrow's: keyword-only arguments,
from_batches one-shot and lazy, with pyarrow's errors."""
import inspect

import pyarrow as pa
import pyarrow.dataset as pds
import pytest

import arrowipc.dataset as ds
from arrowipc import ArrowInvalid

_BATCH = pa.record_batch({"a": pa.array(range(10))})


@pytest.mark.parametrize("name", ["from_batches", "from_dataset", "from_fragment"])
def test_scanner_constructors_take_pyarrows_keywords(name):
    ours = inspect.signature(getattr(ds.Scanner, name)).parameters
    theirs = inspect.signature(getattr(pds.Scanner, name)).parameters
    assert list(ours) == list(theirs)
    assert [p.kind for p in ours.values()] == [p.kind for p in theirs.values()]
    assert [p.default for p in ours.values()] == [p.default for p in theirs.values()]


@pytest.mark.parametrize("make", [
    lambda: (pa.RecordBatchReader.from_batches(_BATCH.schema, [_BATCH, _BATCH]), None),
    lambda: ((b for b in [_BATCH, _BATCH]), _BATCH.schema),
    lambda: ([_BATCH, _BATCH], _BATCH.schema),
])
def test_from_batches_is_one_shot_as_pyarrows(make):
    for module in (ds, pds):
        source, schema = make()
        scanner = module.Scanner.from_batches(source, schema=schema)
        assert scanner.to_table().num_rows == 20
        with pytest.raises((ArrowInvalid, pa.ArrowInvalid),
                           match="OneShotFragment was already scanned"):
            scanner.to_table()


def test_from_batches_reads_its_source_as_the_scan_goes():
    read = []

    def batches():
        for i in range(3):
            read.append(i)
            yield _BATCH

    scanner = ds.Scanner.from_batches(batches(), schema=_BATCH.schema, batch_size=4)
    assert read == []
    first = next(iter(scanner.to_batches()))
    assert first.num_rows == 4 and read == [0]


def test_from_batches_of_an_iterable_needs_a_schema():
    with pytest.raises(ValueError, match="Must provide schema to construct scanner from an "
                                         "iterable"):
        ds.Scanner.from_batches([_BATCH])


def test_from_batches_of_something_not_iterable():
    with pytest.raises(TypeError, match="Expected a RecordBatchReader or an iterable of batches "
                                        "instead of the given type: int"):
        ds.Scanner.from_batches(5, schema=_BATCH.schema)


def test_from_fragment_and_from_dataset_pass_the_scan_keywords(tmp_path):
    path = str(tmp_path / "a.arrow")
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, _BATCH.schema) as writer:
        writer.write_batch(_BATCH)
    data = ds.dataset(path, format="ipc")
    fragment = next(data.get_fragments())
    kwargs = dict(columns=["a"], filter=ds.field("a") > 2, batch_size=3, use_threads=False,
                  batch_readahead=2, fragment_readahead=1, cache_metadata=False)
    for scanner in (ds.Scanner.from_fragment(fragment, **kwargs),
                    ds.Scanner.from_dataset(data, **kwargs)):
        assert [b.num_rows for b in scanner.to_batches()] == [3, 3, 1]
