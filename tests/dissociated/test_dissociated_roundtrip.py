"""Round trips: what a dissociated client reads equals the plain IPC stream of the same data, for
the whole type set, dictionaries with deltas and replacements, compression, in body modes 0, 1 and
mixed, on one connection and on separate metadata and data connections, over Unix sockets and
loopback TCP."""
import glob
import os
import threading

import pyarrow as pa
import pytest

import arrowipc
from arrowipc._core.buffer import Buffer
from arrowipc.dissociated import DissociatedClient, DissociatedServer, connect
from arrowipc.dissociated.shm import SHM_DIR
from arrowipc.ipc import IpcWriteOptions
import testdata
from dissociated_helpers import (TIMEOUT, batch_lengths, delta_dictionary_batches,
                                 extra_types_table, int_batches, issue2_type_table,
                                 plain_stream_table, wait_until)

MODES = {
    "type0": "bytes",
    "type1": "shared",
    "type1-sealed": "shared",
    "type1-peer": "shared",
    "mixed": lambda seq, n: seq % 2 == 1,
}
TYPE_SETS = {b"issue2": issue2_type_table(), b"extra": extra_types_table()}
FULL = TYPE_SETS[b"issue2"]
DELTAS = pa.Table.from_batches(delta_dictionary_batches())


def tables(ticket: bytes):
    if ticket in TYPE_SETS:
        return arrowipc.table(TYPE_SETS[ticket])
    if ticket == b"deltas":
        return arrowipc.table(DELTAS)
    if ticket == b"ints":
        return arrowipc.table(int_batches(6, 1000))
    return None


def read(server, ticket, split: bool, **kw) -> pa.Table:
    if split:
        reader = connect(server.metadata_uri, ticket, data_uri=server.data_uri, timeout=TIMEOUT,
                         **kw)
    else:
        reader = connect(server.uri, ticket, timeout=TIMEOUT, **kw)
    with reader:
        got = reader.read_all()
        stats = reader.stats
    return pa.table(got), stats


@pytest.fixture(scope="module", params=list(MODES))
def server(request):
    with DissociatedServer(tables, body_mode=MODES[request.param],
                           seal_segments=request.param == "type1-sealed",
                           peer_memory=request.param != "type1") as s:
        yield s


@pytest.mark.parametrize("split", [False, True], ids=["one-connection", "split"])
@pytest.mark.parametrize("ticket", list(TYPE_SETS))
def test_whole_type_set_equals_plain_stream(server, split, ticket):
    got, _ = read(server, ticket, split)
    source = TYPE_SETS[ticket]
    expected = plain_stream_table(source)
    assert got.schema.equals(expected.schema, check_metadata=True)
    assert got.equals(expected)
    assert got.equals(source)
    assert batch_lengths(got) == batch_lengths(source)


@pytest.mark.parametrize("split", [False, True], ids=["one-connection", "split"])
def test_dictionary_deltas_and_replacement_match_plain_stream(split):
    options = IpcWriteOptions(emit_dictionary_deltas=True)
    with DissociatedServer(tables, body_mode=MODES["mixed"], options=options) as s:
        got, stats = read(s, b"deltas", split)
    assert got.equals(plain_stream_table(DELTAS, options))
    assert got.to_pylist() == DELTAS.to_pylist()
    # the same dictionary messages as the plain stream: first, two deltas, one replacement
    assert (stats.num_dictionary_batches, stats.num_dictionary_deltas,
            stats.num_replaced_dictionaries) == (4, 2, 1)
    assert stats.num_record_batches == 4


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
@pytest.mark.parametrize("mode", ["type0", "type1"])
def test_compressed_bodies(codec, mode):
    options = IpcWriteOptions(compression=codec)
    with DissociatedServer(tables, body_mode=MODES[mode], options=options) as s:
        got, _ = read(s, b"issue2", False)
    assert got.equals(FULL)


def test_sealed_segments_give_zero_copy_views():
    with DissociatedServer(tables, body_mode="shared", seal_segments=True) as s:
        with connect(s.uri, b"ints", timeout=TIMEOUT) as reader:
            batch = reader.read_next_batch()
            values = batch.column(0).buffers()[1]
            assert isinstance(values, Buffer)
            assert type(values.base).__name__ == "SharedBody"
            assert not values.is_mutable
            exported = pa.record_batch(batch).column(0)
            assert exported.buffers()[1].address == values.address          # zero copy
            assert exported.equals(int_batches(6, 1000).column(0).chunk(0))
            rest = list(reader)
        assert len(rest) == 5


def test_reused_segments_are_copied_out_and_freed_at_once():
    """Segments the server reuses (and so can still write) are never handed out: each body is
    copied into the client's own memory and its block freed straight away, while the batches
    live on."""
    with DissociatedServer(tables, body_mode="shared", peer_memory=False) as s:
        with connect(s.uri, b"ints", timeout=TIMEOUT) as reader:
            batches = list(reader)
            assert s.stats()["shared_bytes"] > 0                  # segments, not peer memory
            for b in batches:
                values = b.column(0).buffers()[1]
                assert type(values.base).__name__ != "SharedBody" and values.address % 64 == 0
            assert s.stats()["blocks_allocated"] == 6
            wait_until(lambda: s.stats()["blocks_outstanding"] == 0, what="blocks freed")
            assert pa.Table.from_batches([pa.record_batch(b) for b in batches]).equals(
                pa.table(tables(b"ints")))


def test_type0_bodies_arrive_in_aligned_private_buffers():
    with DissociatedServer(tables, body_mode="bytes") as s:
        with connect(s.uri, b"ints", timeout=TIMEOUT) as reader:
            batch = reader.read_next_batch()
            values = batch.column(0).buffers()[1]
            assert type(values.base).__name__ != "SharedBody"
            assert values.address % 64 == 0
            list(reader)
        assert s.stats()["blocks_allocated"] == 0


def test_auto_mode_uses_shared_memory_from_the_threshold():
    small, big = int_batches(1, 100), int_batches(1, 100_000)
    both = pa.Table.from_batches(small.to_batches() + big.to_batches())
    with DissociatedServer(lambda t: arrowipc.table(both), body_mode="auto",
                           shm_threshold=64 << 10, seal_segments=True) as s:
        with connect(s.uri, b"x", timeout=TIMEOUT) as reader:
            b1, b2 = list(reader)
            assert type(b1.column(0).buffers()[1].base).__name__ != "SharedBody"
            assert type(b2.column(0).buffers()[1].base).__name__ == "SharedBody"
            assert pa.Table.from_batches([pa.record_batch(b1), pa.record_batch(b2)]).equals(both)


def test_empty_stream_and_zero_row_batches():
    empty = pa.schema([("a", pa.int64()), ("d", pa.dictionary(pa.int8(), pa.string()))])
    zero = pa.table({"a": pa.array([], pa.int64())})

    def resolve(ticket):
        if ticket == b"empty":
            return arrowipc.schema(empty), []
        return arrowipc.record_batch(zero.to_batches()[0] if zero.num_rows else
                                     pa.record_batch([pa.array([], pa.int64())], names=["a"]))

    with DissociatedServer(resolve, body_mode="shared") as s:
        got, _ = read(s, b"empty", False)
        assert got.num_rows == 0 and got.schema.equals(empty)
        got, stats = read(s, b"zero", True)
        assert got.equals(zero) and stats.num_record_batches == 1


def test_pyarrow_stream_resolver_and_pycapsule_reader():
    """The server takes any PyCapsule stream; the reader is one (pyarrow imports it)."""
    source = int_batches(3, 50)
    with DissociatedServer(lambda t: pa.RecordBatchReader.from_batches(source.schema,
                                                                       source.to_batches()),
                           body_mode="shared") as s:
        reader = connect(s.uri, "ticket-as-str", timeout=TIMEOUT)
        got = pa.RecordBatchReader.from_stream(reader).read_all()
        reader.close()
    assert got.equals(source)


def test_several_streams_on_one_client_connection():
    with DissociatedServer(tables, body_mode="shared") as s:
        with DissociatedClient(s.uri, timeout=TIMEOUT) as client:
            for ticket in (b"ints", b"issue2", b"ints"):
                got = pa.table(client.read(ticket).read_all())
                assert got.equals(pa.table(tables(ticket)))
            assert s.stats()["open_connections"] == 1


def test_a_new_stream_needs_the_previous_one_finished():
    with DissociatedServer(tables) as s:
        with DissociatedClient(s.uri, timeout=TIMEOUT) as client:
            reader = client.read(b"ints")
            reader.read_next_batch()
            with pytest.raises(arrowipc.ArrowInvalid, match="not finished"):
                client.read(b"ints")


def test_several_clients_at_once():
    expected = pa.table(tables(b"issue2"))
    results, errors = [], []

    def one(split):
        try:
            results.append(read(s, b"issue2", split)[0])
        except Exception as e:      # noqa: BLE001 - re-raised below
            errors.append(e)

    with DissociatedServer(tables, body_mode=MODES["mixed"]) as s:
        threads = [threading.Thread(target=one, args=(i % 2 == 0,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIMEOUT * 2)
        assert not errors, errors
        assert len(results) == 6 and all(r.equals(expected) for r in results)
        assert s.stats()["connections"] == 9       # 3 one-connection + 3 split (two each)


@pytest.mark.parametrize("mode", ["type0", "type1"])
def test_loopback_tcp(mode):
    with DissociatedServer(tables, host="127.0.0.1", body_mode=MODES[mode]) as s:
        assert s.uri.startswith("arrowipc+tcp://127.0.0.1:")
        got, _ = read(s, b"issue2", True)
        assert got.equals(FULL)
        # without the opt-in, TCP never uses shared memory
        assert s.stats()["blocks_allocated"] == 0


def test_tcp_named_shared_memory_opt_in():
    with DissociatedServer(tables, host="127.0.0.1", body_mode="shared",
                           tcp_shared_memory=True) as s:
        assert "remote_handle=" in s.uri
        prefix = f"arrowipc-{s.token.hex()}-"
        with connect(s.uri, b"ints", timeout=TIMEOUT) as reader:
            batches = list(reader)
            # named files cannot be write-sealed: bodies are copied out of them
            assert type(batches[0].column(0).buffers()[1].base).__name__ != "SharedBody"
            assert pa.Table.from_batches([pa.record_batch(b) for b in batches]).equals(
                pa.table(tables(b"ints")))
            # names go once the client has mapped them
            wait_until(lambda: not [n for n in os.listdir(SHM_DIR) if n.startswith(prefix)],
                       what="named segments unlinked")
            assert s.stats()["blocks_allocated"] == 6
        # the client can refuse named segments: bodies then come as bytes
        with connect(s.uri, b"ints", timeout=TIMEOUT, shared_memory=False) as reader:
            assert type(reader.read_next_batch().column(0).buffers()[1].base).__name__ != \
                "SharedBody"
            list(reader)
        assert not glob.glob(os.path.join(SHM_DIR, prefix + "*"))


def test_compatibility_shift55_tags():
    with DissociatedServer(tables, body_mode=MODES["mixed"], tag_shift=55) as s:
        got, _ = read(s, b"issue2", False, accept_shift55=True)
        assert got.equals(FULL)
        # without the option bit 55 is one of the reserved bits 32-55, which must be 0: the
        # body is refused, and the error says what probably happened
        with pytest.raises(arrowipc.ArrowInvalid, match=r"reserved bits 32-55 set .*only bit 55 "
                           r"is set: a shift-55 tag"):
            read(s, b"issue2", False)


# -- the gold corpus: every type the integration files cover ------------------------

def _gold_streams():
    folder = testdata.integration_dir("cpp-21.0.0")
    paths = sorted(glob.glob(os.path.join(folder, "*.stream")))
    assert paths, f"no gold streams under {folder}"
    return [pytest.param(p, i % 2 == 1, id=os.path.basename(p)[len("generated_"):-len(".stream")])
            for i, p in enumerate(paths)]


@pytest.fixture(scope="module")
def gold_server():
    def resolve(ticket):
        reader = arrowipc.ipc.open_stream(ticket.decode())
        return reader.schema, iter(reader)

    with DissociatedServer(resolve, body_mode=MODES["mixed"]) as s:
        yield s


@pytest.mark.parametrize("path, split", _gold_streams())
def test_gold_streams_equal_their_plain_reading(gold_server, path, split):
    got, _ = read(gold_server, path.encode(), split)
    expected = pa.table(arrowipc.ipc.open_stream(path).read_all())
    assert got.schema.equals(expected.schema, check_metadata=True)
    assert got.equals(expected)
    assert batch_lengths(got) == batch_lengths(expected)
