"""What the two sides of type-1 shared memory agree on: the layout of a type-1 address (segment
id in bits 40-63, byte offset in the segment in bits 0-39) and where named segments live.

The server's side is arena.py (segments it writes bodies into and the frees it applies), the
client's is segments.py (segments it maps and the frees it sends); neither imports the other.
"""
from __future__ import annotations

from ._shm import PEER_SEGMENT_BASE, SEGMENT_SHIFT

__all__ = ["address_of", "MAX_SEGMENT_ID", "MAX_SEGMENT_SIZE", "NAME_PREFIX", "OFFSET_MASK",
           "PEER_SEGMENT_ADDRESS", "PEER_SEGMENT_BASE", "SEGMENT_SHIFT", "SHM_DIR",
           "split_address"]

# SEGMENT_SHIFT and PEER_SEGMENT_BASE (the ids of a peer-memory connection's segments for small
# bodies) are defined in _shm, whose place_regions reads addresses on the client's path.
OFFSET_MASK = (1 << SEGMENT_SHIFT) - 1
# On a peer-memory connection, the type-1 addresses from here up name segments (segment ids from
# PEER_SEGMENT_BASE), those below the server's own memory.
PEER_SEGMENT_ADDRESS = PEER_SEGMENT_BASE << SEGMENT_SHIFT
MAX_SEGMENT_SIZE = 1 << SEGMENT_SHIFT
MAX_SEGMENT_ID = (1 << 24) - 1
# Named segments (TCP on one host): files under SHM_DIR whose names start with NAME_PREFIX.
SHM_DIR = "/dev/shm"
NAME_PREFIX = "arrowipc-"


def address_of(segment_id: int, offset: int) -> int:
    """A type-1 address: the segment id in bits 40-63, the offset in bits 0-39."""
    return (segment_id << SEGMENT_SHIFT) | offset


def split_address(address: int) -> tuple[int, int]:
    """(segment id, offset) of a type-1 address."""
    return address >> SEGMENT_SHIFT, address & OFFSET_MASK
