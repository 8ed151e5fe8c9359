"""The Dissociated IPC protocol (Arrow format/DissociatedIPC): IPC metadata and bodies on
separate channels, bodies optionally in shared memory.

    server = DissociatedServer(lambda ticket: table)          # Unix socket in a temp dir
    reader = arrowipc.dissociated.connect(server.uri, b"ticket")
    table = reader.read_all()

See docs/PROTOCOL.md for our reading of the specification's gaps, the URI form and the framing.
"""
from .reader import DissociatedClient, DissociatedReader, connect
from .server import DissociatedServer, UnknownTicket
from .transport import SocketTransport, Transport, connect_tcp, connect_unix
from .uri import DissociatedURI, format_uri, parse_uri

__all__ = [
    "DissociatedClient", "DissociatedReader", "DissociatedServer", "DissociatedURI",
    "SocketTransport", "Transport", "UnknownTicket", "connect", "connect_tcp", "connect_unix",
    "format_uri", "parse_uri",
]
