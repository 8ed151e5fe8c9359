"""dataset([ds1, ds2, ...]): a UnionDataset, pyarrow's rules and results (pyarrow.dataset as
the oracle), over datasets of files and in memory."""
import os

import pytest

import arrowipc.dataset as ds

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")
pads = pytest.importorskip("pyarrow.dataset")

T1 = {"colA": [1, 2, 6, 8], "col2": ["a", "b", "f", "g"]}
T2 = {"colA": [9, 10, 11], "col2": ["h", "i", "l"]}


def _children(module, kind, root):
    if kind == "mem":
        return [module.dataset(pa.table(T1)), module.dataset(pa.table(T2))]
    out = []
    for name, data in (("t1", T1), ("t2", T2)):
        path = os.path.join(root, module.__name__, name)
        module.write_dataset(pa.table(data), path, format="ipc")
        out.append(module.dataset(path, format="ipc"))
    return out


@pytest.fixture(params=["fs", "mem"])
def unions(request, tmp_path):
    """(ours, pyarrow's) union of the same two tables."""
    return tuple(m.dataset(_children(m, request.param, str(tmp_path))) for m in (ds, pads))


def _same(got, want):
    got = pa.table(got)
    assert got.schema.equals(want.schema) and got.to_pydict() == want.to_pydict()


@pytest.mark.parametrize("read", [
    lambda u, m: u.to_table(),
    lambda u, m: u.filter((pc.field("colA") < 3) | (pc.field("colA") == 9)).to_table(),
    lambda u, m: u.to_table(columns=["col2"], filter=m.field("colA") > 5),
    lambda u, m: u.to_table(columns={"twice": m.field("colA") * 2}),
    lambda u, m: u.head(5),
    lambda u, m: u.take([0, 5, 6]),
    lambda u, m: u.scanner(filter=m.field("colA") > 1).head(4),
    lambda u, m: pa.Table.from_batches([pa.record_batch(b) for b in u.to_batches()]),
], ids=["all", "filter", "columns", "expressions", "head", "take", "scanner_head", "batches"])
def test_a_union_reads_as_pyarrows(unions, read):
    ours, theirs = unions
    assert type(ours).__name__ == "UnionDataset"
    _same(read(ours, ds), read(theirs, pads))


def test_a_union_counts_and_lists_fragments_as_pyarrows(unions):
    ours, theirs = unions
    assert ours.count_rows() == theirs.count_rows() == 7
    assert ours.count_rows(filter=ds.field("colA") > 5) == \
        theirs.count_rows(filter=pads.field("colA") > 5)
    assert len(list(ours.get_fragments())) == len(list(theirs.get_fragments()))
    assert len(ours.children) == 2 and pa.schema(ours.schema).equals(theirs.schema)


def test_children_are_read_as_the_unified_schema(tmp_path):
    """A column a child lacks reads as nulls; an explicit schema picks and orders columns."""
    a = pa.table({"x": [1], "y": ["a"]})
    b = pa.table({"x": [2], "z": [1.5]})
    pads.write_dataset(b, str(tmp_path / "b"), format="ipc")
    for kids in ([ds.dataset(a), ds.dataset(b)],
                 [ds.dataset(a), ds.dataset(str(tmp_path / "b"), format="ipc")]):
        want = pads.dataset([pads.dataset(a), pads.dataset(b)]).to_table()
        _same(ds.dataset(kids).to_table(), want)
        schema = pa.schema([("z", pa.float64()), ("x", pa.int64())])
        _same(ds.dataset(kids, schema=schema).to_table(),
              pads.dataset([pads.dataset(a), pads.dataset(b)], schema=schema).to_table())


def test_schemas_that_do_not_unify_are_pyarrows_type_error():
    a = ds.dataset(pa.table({"x": pa.array([1], pa.int32())}))
    b = ds.dataset(pa.table({"x": [2]}))
    with pytest.raises(TypeError, match="Unable to merge: Field x has incompatible types"):
        ds.dataset([a, b])


def test_a_union_takes_no_other_argument_and_no_filtered_child():
    a, b = ds.dataset(pa.table(T1)), ds.dataset(pa.table(T2))
    with pytest.raises(ValueError, match="cannot pass any additional arguments"):
        ds.dataset([a, b], format="ipc")
    with pytest.raises(ValueError, match="currently not supported"):
        ds.dataset([a.filter(ds.field("colA") < 3), b])


def test_a_union_is_written_as_a_dataset(tmp_path, unions):
    ours, _ = unions
    ds.write_dataset(ours, str(tmp_path / "out"), format="ipc")
    got = pads.dataset(str(tmp_path / "out"), format="ipc").to_table()
    assert sorted(got.column("colA").to_pylist()) == T1["colA"] + T2["colA"]


def test_replace_schema_keeps_each_fields_type_as_pyarrows(tmp_path):
    import pyarrow.feather as pf
    from arrowipc.errors import ArrowTypeError
    pf.write_feather(pa.table({"i": [1, 2], "s": ["a", "b"]}), str(tmp_path / "x.arrow"))
    table = pa.table({"i": [5], "s": ["z"]})
    for mod in (pads, ds):
        files = mod.dataset(str(tmp_path), format="ipc")
        for data in (files, mod.dataset(table), mod.dataset([files, mod.dataset(table)])):
            with pytest.raises(pa.ArrowTypeError if mod is pads else ArrowTypeError,
                               match="^fields had matching names but differing types. From: "
                                     "i: int64 To: i: int32$"):
                data.replace_schema(pa.schema([("i", pa.int32())]))
            # fewer, reordered and new fields are taken
            got = data.replace_schema(pa.schema([("z", pa.int8()), ("s", pa.string())]))
            assert pa.table(got.to_table()).to_pydict() == {
                "z": [None] * data.count_rows(),
                "s": pa.table(data.to_table()).column("s").to_pylist()}
