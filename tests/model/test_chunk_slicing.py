"""Slicing chunked arrays and tables keeps the chunks pyarrow keeps (empty ones included), and
to_batches leaves out what pyarrow's leaves out: every chunk layout of up to four chunks of 0, 1
or 2 rows, every offset and length (and none)."""
import itertools

import pyarrow as pa
import pytest

import arrowipc as ai

EMPTY, ONE, TWO = (pa.record_batch({"a": pa.array(v, pa.int64())}) for v in ([], [1], [1, 2]))
LAYOUTS = [bs for r in range(5) for bs in itertools.product([EMPTY, ONE, TWO], repeat=r)]


def _shape(table):
    return ([b.num_rows for b in table.to_batches()], [b.num_rows for b in table.to_batches(1)],
            [len(c) for c in table.column(0).chunks], table.num_rows)


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda bs: "-".join(str(b.num_rows) for b in bs))
def test_slices_keep_pyarrows_chunks(layout):
    theirs = pa.Table.from_batches(list(layout), schema=EMPTY.schema)
    ours = ai.Table.from_batches([ai.record_batch(b) for b in layout], schema=ai.schema(EMPTY.schema))
    column = pa.chunked_array([b.column(0) for b in layout], pa.int64())
    our_column = ai.chunked_array([ai.array(b.column(0)) for b in layout], ai.int64())
    assert _shape(ours) == _shape(theirs)
    for offset in range(theirs.num_rows + 2):
        for length in [*range(theirs.num_rows + 3), None]:
            assert _shape(ours.slice(offset, length)) == _shape(theirs.slice(offset, length)), \
                (offset, length)
            got = our_column.slice(offset, length)
            expected = column.slice(offset, length)
            assert [len(c) for c in got.chunks] == [len(c) for c in expected.chunks]
            assert got.to_pylist() == expected.to_pylist()
