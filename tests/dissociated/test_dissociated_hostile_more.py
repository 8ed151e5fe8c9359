"""More hostile peers (between real threads over real Unix sockets): descriptors sent where none
belong, and other attacks the first rounds did not cover. Each test is one defect that was found
(or one attack that is handled and was not tested yet)."""
import os
import struct

import pyarrow as pa

import arrowipc
from arrowipc.dissociated import DissociatedServer, connect
from arrowipc.dissociated import _wire as wire
from dissociated_helpers import (TIMEOUT, FakeServer, raw_connection, send_stream, small_table,
                                 wait_until)

SMALL = arrowipc.table(small_table())


def descriptors_named(name: str) -> list:
    """This process's descriptors open on the memfd called `name`."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == f"/memfd:{name} (deleted)":
                out.append(fd)
        except OSError:
            pass
    return out


def read_stream(t) -> None:
    """Read frames until the stream end (the server handled every frame sent before the
    request)."""
    while True:
        frame = t.receive()
        assert frame is not None and frame.kind != wire.FRAME_ERROR, frame
        if frame.kind == wire.FRAME_STREAM_END:
            return


# -- descriptors where none belong ----------------------------------------------------------------

def test_descriptors_a_client_attaches_to_its_frames_are_not_kept_by_the_server():
    """A client sends no descriptors, but the server kept those attached to its frames (free_data
    here) until 64 had come or the connection ended: 63 per connection, so a few connections of
    one client took every descriptor of the server."""
    name = f"stray-to-server-{os.getpid()}"
    with DissociatedServer(lambda ticket: SMALL, body_mode="bytes") as s:
        with raw_connection(s.unix_path) as t:
            fd = os.memfd_create(name)
            try:
                for _ in range(40):
                    t.send_frame(wire.FRAME_TAGGED, s.free_data, [struct.pack("<Q", 7)], fd=fd)
            finally:
                os.close(fd)
            t.send_frame(wire.FRAME_TAGGED, s.want_data, [b"t"])
            read_stream(t)                  # the server read every frame before the request
            assert descriptors_named(name) == []
            assert s.stats()["unknown_frees"] == 40
        wait_until(lambda: s.stats()["open_connections"] == 0, what="the client gone")
