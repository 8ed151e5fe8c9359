"""The writer leaves what it is given alone and does each step once per batch.

- the IpcWriteOptions a caller passes is never changed (it may serve other writers), whatever
  keywords and whichever writer (stream, file, the encoder without I/O) it is given to;
- a compressed batch is flattened once: the raw body size counted in the statistics and the
  encoded body come from the same flattening.
"""
import copy
import io

import pytest

pa = pytest.importorskip("pyarrow")
import pyarrow.ipc as pa_ipc  # noqa: E402

import arrowipc  # noqa: E402
from arrowipc import ipc  # noqa: E402
from arrowipc.ipc import writer as writer_module  # noqa: E402


def _batch():
    return arrowipc.record_batch({"a": [1, 2, None], "s": ["x", None, "zz"],
                                  "d": pa.array(["p", "q", "p"]).dictionary_encode()})


@pytest.mark.parametrize("compression", [None, "zstd", "lz4"])
@pytest.mark.parametrize("keywords", [{}, {"use_legacy_format": True},
                                      {"use_legacy_format": False}])
@pytest.mark.parametrize("open_writer", [ipc.new_stream, ipc.new_file])
def test_writers_never_change_the_options_they_are_given(compression, keywords, open_writer):
    options = ipc.IpcWriteOptions(compression=compression, emit_dictionary_deltas=True)
    before = copy.deepcopy(vars(options))
    batch = _batch()
    with open_writer(io.BytesIO(), batch.schema, options=options, **keywords) as w:
        w.write_batch(batch)
        w.write_table(arrowipc.Table.from_batches([batch, batch]))
    assert vars(options) == before


def test_the_encoder_never_changes_the_options_it_is_given():
    options = ipc.IpcWriteOptions(compression="zstd", use_legacy_format=True)
    before = copy.deepcopy(vars(options))
    batch = _batch()
    encoder = writer_module.MessageEncoder(batch.schema, options)
    encoder.schema_message()
    encoder.batch_messages(batch)
    assert vars(options) == before


@pytest.mark.parametrize("compression", ["zstd", "lz4"])
def test_a_compressed_batch_is_flattened_once(compression, monkeypatch):
    flattened, encoded_with_flat = [], []
    real_flatten, real_encode = writer_module.flatten_columns, writer_module.encode_record_batch

    def counting_flatten(*args, **kwargs):
        flattened.append(1)
        return real_flatten(*args, **kwargs)

    def checking_encode(columns, num_rows, alignment, version, md_bytes, codec, legacy,
                        compress, flat=None, compressed=None, spans_out=None):
        encoded_with_flat.append(flat is not None)     # None would flatten a second time inside
        return real_encode(columns, num_rows, alignment, version, md_bytes, codec, legacy,
                           compress, flat, compressed, spans_out)

    monkeypatch.setattr(writer_module, "flatten_columns", counting_flatten)
    monkeypatch.setattr(writer_module, "encode_record_batch", checking_encode)
    batch = _batch()
    sink = io.BytesIO()
    with ipc.new_stream(sink, batch.schema,
                        options=ipc.IpcWriteOptions(compression=compression)) as w:
        w.write_batch(batch)                                                # one batch
        w.write_table(arrowipc.Table.from_batches([batch, batch, batch]))    # a window of three
        raw_size, _ = w.body_sizes
    assert len(flattened) == 4 and encoded_with_flat == [True] * 4
    assert pa_ipc.open_stream(sink.getvalue()).read_all().equals(
        pa.Table.from_batches([pa.record_batch(batch)] * 4))
    assert raw_size > 0


def test_each_schema_object_is_compared_once_and_a_different_one_is_still_refused(monkeypatch):
    """Batches whose schema is an equal but distinct object are compared with the writer's
    schema once per object (not once per batch); a batch with another schema is refused after
    them as before, with ArrowInvalid (a ValueError, as pyarrow raises)."""
    first = arrowipc.record_batch({"a": [1, 2], "b": ["x", "y"]})
    equal = [arrowipc.record_batch({"a": [i], "b": ["z"]}) for i in range(3)]
    assert all(b.schema is not first.schema and b.schema.equals(first.schema) for b in equal)
    compared = []
    real_equals = arrowipc.Schema.equals
    monkeypatch.setattr(arrowipc.Schema, "equals",
                        lambda self, other, *a, **k: compared.append(self) or
                        real_equals(self, other, *a, **k))
    sink = io.BytesIO()
    with ipc.new_stream(sink, first.schema) as w:
        w.write_batch(first)
        for _ in range(2):
            w.write_batch(equal[0])
        w.write_batch(equal[1])
        assert compared == [equal[0].schema, equal[1].schema]
        with pytest.raises(ValueError, match="batch schema does not match the writer's schema"):
            w.write_batch(arrowipc.record_batch({"a": [1.5], "b": ["x"]}))
        w.write_batch(equal[2])
    got = pa_ipc.open_stream(sink.getvalue()).read_all()
    assert got.column("a").to_pylist() == [1, 2, 0, 0, 1, 2]


@pytest.mark.parametrize("open_writer", [ipc.new_stream, ipc.new_file])
def test_plain_batches_go_straight_out_with_the_same_bytes_and_statistics(open_writer,
                                                                          monkeypatch, tmp_path):
    """A batch that is its one message (no dictionaries, compression or custom metadata, the
    writer's schema) is encoded and written without the general path's message list: the
    bytes and the writer's statistics are those of the general path, to memory and to a path;
    a batch with custom metadata or an equal but distinct schema takes the general path."""
    whole = arrowipc.record_batch({"a": [0, None, 3, 1, None, 3, 2, 2, 2, 3, 3, 3],
                                   "s": ["x", "yy", None] * 4})
    batches = [whole.slice(3 * i, 3) for i in range(4)]         # one Schema object
    schema = whole.schema
    assert all(b.schema is schema for b in batches)
    other = arrowipc.record_batch({"a": [9], "s": ["z"]})
    assert other.schema is not schema

    def write(sink):
        with open_writer(sink, schema) as w:
            for b in batches[:2]:
                w.write_batch(b)
            w.write_batch(other)
            w.write_batch(batches[2], custom_metadata={"k": "v"})
            w.write_batch(batches[3])
        return w.stats

    general = []
    real = writer_module.MessageEncoder.batch_messages
    monkeypatch.setattr(writer_module.MessageEncoder, "batch_messages",
                        lambda self, batch, *a, **k: general.append(batch) or
                        real(self, batch, *a, **k))
    plain_stats = write(plain_sink := arrowipc.BufferOutputStream())
    assert general == [other, batches[2]]
    path_stats = write(str(tmp_path / "out.arrow"))
    monkeypatch.setattr(writer_module.MessageEncoder, "plain_batch", lambda self, batch: None)
    general_stats = write(general_sink := arrowipc.BufferOutputStream())
    expected = general_sink.getvalue().to_pybytes()
    assert plain_sink.getvalue().to_pybytes() == expected
    assert (tmp_path / "out.arrow").read_bytes() == expected
    assert plain_stats == general_stats == path_stats
    assert plain_stats.num_record_batches == 5
    read = pa_ipc.open_stream if open_writer is ipc.new_stream else pa_ipc.open_file
    assert read(expected).read_all().column("a").to_pylist()[:6] == [0, None, 3, 1, None, 3]
